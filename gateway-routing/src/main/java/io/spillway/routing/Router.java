package io.spillway.routing;

import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.time.Ticker;
import io.spillway.routing.BackendCalls.Attempt;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.BreakerListener;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import io.spillway.routing.cloud.CloudRoute;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The terminal stage: picks the backend for a request, calls it through the admission gate, and
 * fails over between the cloud and the local backend when one of them cannot serve.
 *
 * <p>The cloud is an ordered list of {@link CloudRoute routes}, each with its own breaker. A request
 * goes to the first route that takes it (its breaker closed, or it is that route's probe; an azure
 * route only takes models it has a deployment for); a capacity answer or transient failure there
 * moves it to the next such route, and after the last one to local. Below, "the cloud" is whichever
 * route is tried; with one route (the {@code cloud.baseUrl} shorthand) everything reads as before.
 *
 * <ul>
 *   <li>The {@link Breaker} decides first: closed → cloud, open → local, half-open → one probe to the
 *       cloud and everyone else local. {@link RequestAttributes#PREFER_LOCAL} (shaping's last ladder
 *       step) sends a request local instead of to the cloud, but never keeps it from being the
 *       half-open probe: the way back to the cloud does not depend on which tiers are sending.
 *       Whether the preference took effect is the router's to say: a request that preferred local and
 *       went to the local backend is recorded so in its {@link RequestOutcome#localByPreference()}
 *       (shaping's {@code local} step in its degraded steps), until another backend serves it after all.
 *   <li>Cloud first, then local (request-level failover): when the cloud's answer is a capacity
 *       answer or a transient failure (see {@link CapacityClassifier}), the request is sent once to
 *       the local backend before its client sees anything. A stream counts as answered only once its
 *       first event has arrived, so a stream that fails before that is still retried; one that fails
 *       later ends with an error event (written by the front end), never with a second backend's
 *       answer spliced in.
 *   <li>Local first, then the cloud (the fallback): when a request went local because the breaker
 *       opened on its own (or shaping preferred local) and the local backend cannot serve it
 *       (disabled, not ready, unreachable, an error, or {@code unsupported_on_local}), the cloud is
 *       tried once before any 503; the answer says so in {@value #FALLBACK_HEADER}. While an operator
 *       forces the breaker open, requests stay local. The fallback is not the probe: its answer
 *       changes nothing in an open or half-open breaker (no longer time local, no early close).
 *   <li>When neither can serve: 503 with {@code Retry-After} from {@link Breaker#retryAfter}; except
 *       after a transient cloud failure, where the client gets that failure (502, 504). A request
 *       local cannot serve is answered {@code unsupported_on_local}: 503 with the time to the next
 *       probe when the cloud may serve it then, 400 without {@code Retry-After} while forced open.
 *       Rate-limit, quota and final answers pass through as they are, with {@code Retry-After} on
 *       every 429 and 503.
 *   <li>Every answer names its backend in the {@link RequestOutcome} (the headers stage writes it as
 *       {@code x-spillway-backend}), a fallback its cause, and one charged to a cloud route the route's
 *       name ({@code x-spillway-route}).
 * </ul>
 *
 * <p>Each backend call holds a permit from the {@link AdmissionGate}; a stream holds it until it ends
 * or is closed. A request whose client has gone ({@link ClientDisconnect}) stops waiting for a
 * permit and is never failed over. Calls are timed on the injected {@link Ticker}; what happens is told
 * to a {@link RouterListener} (the app binds its meters there). Thread-safe: one instance serves all
 * requests.
 */
public final class Router implements Terminal {
  private static final Logger log = LoggerFactory.getLogger(Router.class);
  public static final String BACKEND_HEADER = OutcomeHeadersInterceptor.BACKEND;
  /** The cloud route that served (or, for an error, was tried last): its name from {@code cloud.routes}. */
  public static final String ROUTE_HEADER = OutcomeHeadersInterceptor.ROUTE;
  /** Set when the cloud was tried because local could not serve; the value names why ({@code local_not_ready}, ...). */
  public static final String FALLBACK_HEADER = OutcomeHeadersInterceptor.FALLBACK;

  private final List<CloudRoute> routes;
  private final Backend local;
  private final boolean retryLocally;
  private final LocalModelList localModels;
  private final RouterListener listener;
  private final Refusals refusals;
  private final BackendCalls calls;
  private final boolean blocking;

  private Router(Builder b) {
    if (b.routes != null) {
      this.routes = List.copyOf(b.routes);
    } else {
      Breaker breaker = Objects.requireNonNull(b.breaker, "breaker");
      this.routes = List.of(CloudRoute.openAi(breaker.route(), Objects.requireNonNull(b.cloud, "cloud"), breaker));
    }
    if (routes.isEmpty()) {
      throw new IllegalArgumentException("at least one cloud route");
    }
    this.blocking = routes.stream().anyMatch(route -> route.breaker().mayBlock());
    this.local = b.local;
    this.retryLocally = Objects.requireNonNull(b.retryLocally, "retryLocally");
    this.localModels = Objects.requireNonNull(b.localModels, "localModels");
    this.listener = b.listener;
    this.refusals = new Refusals(this::retryAfter, listener);
    this.calls = new BackendCalls(Objects.requireNonNull(b.classifier, "classifier"),
        b.gate != null ? b.gate : AdmissionGate.OPEN, Objects.requireNonNull(b.ticker, "ticker"), listener);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The cloud routes in the order they are tried. */
  public List<CloudRoute> routes() {
    return routes;
  }

  /**
   * The {@code Retry-After} for a client no backend served: the earliest time any route's breaker
   * lets a request through again (or the upstream's own longer wait); see {@link Breaker#retryAfter}.
   */
  private Duration retryAfter(Duration upstream) {
    Duration shortest = null;
    for (CloudRoute route : routes) {
      Duration wait = route.breaker().retryAfter(upstream);
      if (shortest == null || wait.compareTo(shortest) < 0) {
        shortest = wait;
      }
    }
    return shortest;
  }

  /** Warms the local backend as soon as a capacity streak starts, so the switch does not pay a cold load. */
  private void warmUpLocal() {
    if (local == null) {
      return;
    }
    Thread.ofVirtual().name("local-warm-up").start(() -> {
      try {
        local.warmUp();
      } catch (RuntimeException e) {
        log.warn("warming up the local backend failed: {}", e.toString());
      }
    });
  }

  /** A route the request went past, with the ticket its breaker gave (a local one, or a cloud one it preferred not to use). */
  private record Passed(CloudRoute route, Breaker.Ticket ticket) {}

  /** A route that answered this request with a capacity answer or a transient failure. */
  private record RouteFailure(CloudRoute route, Attempt attempt, Verdict verdict) {}

  /** One route's try: the client's answer, or the failure to carry on from; exactly one is set. */
  private record RouteTry(GatewayResponse response, RouteFailure failure) {}

  /** Whether deciding may wait on the network: a fleet breaker in Redis. */
  @Override
  public boolean mayBlock() {
    return blocking;
  }

  @Override
  public CompletionStage<GatewayResponse> handle(GatewayRequest request) {
    boolean preferLocal = Boolean.TRUE.equals(request.attribute(RequestAttributes.PREFER_LOCAL));
    return routesFrom(request, 0, preferLocal, new ArrayList<>(), null);
  }

  /**
   * The routes from {@code index} on, in order: the first that takes the request is tried; one that
   * fails it moves the request on to the next, and after the last to local.
   */
  private CompletionStage<GatewayResponse> routesFrom(
      GatewayRequest request, int index, boolean preferLocal, List<Passed> passed, RouteFailure failed) {
    for (int i = index; i < routes.size(); i++) {
      CloudRoute route = routes.get(i);
      if (!route.serves(request)) {
        continue;
      }
      Breaker.Ticket ticket = route.breaker().acquire();
      if (ticket.target() == Breaker.Target.PROBE || (ticket.target() == Breaker.Target.CLOUD && !preferLocal)) {
        int next = i + 1;
        return tryRoute(request, route, ticket).thenCompose(tried -> {
          if (tried.response() != null) {
            release(passed);
            return CompletableFuture.completedFuture(tried.response());
          }
          return routesFrom(request, next, preferLocal, passed, tried.failure());
        });
      }
      passed.add(new Passed(route, ticket));
    }
    if (failed != null) {
      release(passed);
      return afterRoutesFailed(request, failed);
    }
    return localFirst(request, passed);
  }

  private static void release(List<Passed> passed) {
    passed.forEach(p -> p.route().breaker().release(p.ticket()));
  }

  /**
   * One backend call as the router sees it: refused by the admission gate (a {@link GatewayException},
   * the client's answer) or an attempt; with a breaker that may block, what follows runs on a virtual
   * thread.
   */
  private CompletionStage<Attempt> call(Backend backend, GatewayRequest request) {
    CompletionStage<Attempt> attempt;
    try {
      attempt = calls.callAsync(backend, request);
    } catch (RuntimeException | Error e) {
      attempt = CompletableFuture.failedFuture(e);
    }
    return blocking ? Blocking.continuedOffLoop(attempt) : attempt;
  }

  /**
   * One route, as the request's turn comes to it: its answer is the client's unless it is a capacity
   * answer or a transient failure (and {@code failover.retryLocally} is on), which moves the request
   * on to the next route and then local.
   */
  private CompletionStage<RouteTry> tryRoute(GatewayRequest request, CloudRoute route, Breaker.Ticket ticket) {
    return call(route.backend(), request).handle((attempt, failure) -> {
      if (failure != null) {
        route.breaker().release(ticket);
        if (Blocking.cause(failure) instanceof GatewayException refused) {
          return new RouteTry(routed(request, route, Refusals.error(request, route.backend().kind(), refused)), null);
        }
        throw Blocking.rethrow(Blocking.cause(failure));
      }
      if (attempt.verdict().outcome() != Outcome.SUCCESS && ClientDisconnect.of(request).happened()) {
        return new RouteTry(clientGone(request, route, ticket, attempt), null);
      }
      Verdict verdict = recordCloud(route, ticket, attempt);
      if (!verdict.outcome().failsOver() || !retryLocally) {
        return new RouteTry(answer(request, route, attempt), null);
      }
      log.info("request {}: the cloud (route {}) gave a {} answer ({}); trying the next route or local",
          request.id(), route.name(), verdict.outcome().tag(), verdict.rule());
      listener.onFailover(route.name(), verdict);
      return new RouteTry(null, new RouteFailure(route, attempt, verdict));
    });
  }

  /** Every route that took the request failed it: the local backend once. */
  private CompletionStage<GatewayResponse> afterRoutesFailed(GatewayRequest request, RouteFailure failed) {
    Verdict verdict = failed.verdict();
    log.info("request {}: retrying on the local backend", request.id());
    return tryLocal(request, true).thenApply(tried -> {
      if (tried.served() != null) {
        return answer(request, null, tried.served());
      }
      if (tried.refusedByGate() != null) {
        return tried.refusedByGate();
      }
      LocalFailure failure = tried.failure();
      if (failure.unsupported() != null) {
        return refusals.unsupported(request, failure.unsupported(), BackendKind.LOCAL,
            "The cloud, tried first, " + FailureWords.of(verdict), verdict);
      }
      if (verdict.outcome() == Outcome.TRANSIENT) {
        // "At capacity" would not say what happened: the cloud could not be reached at all.
        return answer(request, failed.route(), failed.attempt());
      }
      return refusals.unavailable(request, BackendKind.LOCAL,
          "The cloud model is at capacity, and " + failure.words() + " either", verdict.retryAfter());
    });
  }

  /** What a request sent local first says when no backend serves it. */
  private static String situation(GatewayRequest request, List<Passed> passed) {
    if (passed.isEmpty()) {
      return "No cloud route serves the model '" + request.model() + "', so it went to the local backend";
    }
    if (passed.stream().allMatch(p -> p.ticket().forcedLocal())) {
      return "An operator has forced all traffic to the local backend";
    }
    if (passed.stream().anyMatch(p -> p.ticket().cloud())) {
      return "This request was routed to the local backend";
    }
    return "Traffic is on the local backend while the cloud is at capacity";
  }

  /**
   * The local backend; when it cannot serve, the routes it went past once each, in order, except
   * those an operator forced open. Those are released unused.
   */
  private CompletionStage<GatewayResponse> localFirst(GatewayRequest request, List<Passed> passed) {
    String situation = situation(request, passed);
    return tryLocal(request, false).thenCompose(tried -> {
      if (tried.failure() == null) {
        release(passed);
        return CompletableFuture.completedFuture(
            tried.served() != null ? answer(request, null, tried.served()) : tried.refusedByGate());
      }
      LocalFailure failure = tried.failure();
      List<Passed> fallbacks = new ArrayList<>();
      List<Passed> forced = new ArrayList<>();
      passed.forEach(p -> (p.ticket().forcedLocal() ? forced : fallbacks).add(p));
      release(forced);
      if (!fallbacks.isEmpty()) {
        log.info("request {}: {}; trying the cloud instead", request.id(), failure.words());
        listener.onFallback(failure.cause().tag());
        return fallBackToCloud(request, fallbacks, 0, situation, failure, null);
      }
      if (failure.unsupported() != null) {
        return CompletableFuture.completedFuture(passed.isEmpty()
            ? Refusals.noRoute(request, failure.unsupported(), BackendKind.LOCAL)
            : Refusals.forcedLocal(request, failure.unsupported(), BackendKind.LOCAL));
      }
      return CompletableFuture.completedFuture(
          refusals.unavailable(request, BackendKind.LOCAL, situation + ", and " + failure.words(), null));
    });
  }

  /**
   * The routes the request went past, once each from {@code index}, for a request local could not
   * serve. A cloud ticket (breaker closed, the request only preferred local) is recorded as any
   * cloud answer is; a local ticket (breaker open, or half-open with the probe out) is not: this try
   * is not the probe, so neither its capacity answer nor its success moves the breaker.
   */
  private CompletionStage<GatewayResponse> fallBackToCloud(GatewayRequest request, List<Passed> fallbacks, int index,
      String situation, LocalFailure failure, RouteFailure last) {
    if (index == fallbacks.size()) {
      return CompletableFuture.completedFuture(noFallbackServed(request, situation, failure, last));
    }
    CloudRoute route = fallbacks.get(index).route();
    Breaker.Ticket ticket = fallbacks.get(index).ticket();
    List<Passed> rest = fallbacks.subList(index + 1, fallbacks.size());
    return call(route.backend(), request).handle((attempt, thrown) -> {
      if (thrown != null) {
        route.breaker().release(ticket);
        release(rest);
        if (Blocking.cause(thrown) instanceof GatewayException refused) {
          return CompletableFuture.completedFuture(withFallback(request,
              routed(request, route, Refusals.error(request, route.backend().kind(), refused)), failure));
        }
        throw Blocking.rethrow(Blocking.cause(thrown));
      }
      if (attempt.verdict().outcome() != Outcome.SUCCESS && ClientDisconnect.of(request).happened()) {
        release(rest);
        return CompletableFuture.completedFuture(clientGone(request, route, ticket, attempt));
      }
      Verdict verdict = recordCloud(route, ticket, attempt);
      if (!verdict.outcome().failsOver()) {
        release(rest);
        return CompletableFuture.completedFuture(withFallback(request, answer(request, route, attempt), failure));
      }
      return fallBackToCloud(request, fallbacks, index + 1, situation, failure,
          new RouteFailure(route, attempt, verdict));
    }).thenCompose(next -> next);
  }

  /** What the client of a request local could not serve gets when no route it went past served it either. */
  private GatewayResponse noFallbackServed(
      GatewayRequest request, String situation, LocalFailure failure, RouteFailure last) {
    Verdict verdict = last.verdict();
    GatewayResponse refused;
    if (failure.unsupported() != null) {
      refused = refusals.unsupported(request, failure.unsupported(), last.route().backend().kind(),
          "The cloud, tried instead, " + FailureWords.of(verdict), verdict);
    } else if (verdict.outcome() == Outcome.TRANSIENT) {
      return withFallback(request, answer(request, last.route(), last.attempt()), failure);
    } else {
      refused = refusals.unavailable(request, last.route().backend().kind(),
          situation + ", and " + failure.words() + "; the cloud, tried instead, " + FailureWords.of(verdict),
          verdict.retryAfter());
    }
    return withFallback(request, routed(request, last.route(), refused), failure);
  }

  /**
   * The cloud call of a client that has gone: it was cancelled, or it failed with nobody waiting, so
   * there is no failover. Only a real capacity answer tells the breaker something about the route.
   */
  private GatewayResponse clientGone(GatewayRequest request, CloudRoute route, Breaker.Ticket ticket, Attempt attempt) {
    if (attempt.verdict().outcome() == Outcome.CAPACITY) {
      recordCloud(route, ticket, attempt);
    } else {
      route.breaker().release(ticket);
    }
    attempt.discard();
    return routed(request, route, Refusals.error(request, route.backend().kind(), BackendCalls.clientClosed()));
  }

  /** Reports a route's answer to its breaker (a no-op for a local ticket) and counts capacity answers. */
  private Verdict recordCloud(CloudRoute route, Breaker.Ticket ticket, Attempt attempt) {
    Verdict verdict = attempt.verdict();
    route.breaker().record(ticket, verdict);
    if (verdict.outcome() == Outcome.CAPACITY) {
      listener.onCapacityAnswer(route.name(), verdict);
    }
    return verdict;
  }

  /**
   * One try on the local backend. {@code failover}: the cloud already failed this request, so
   * anything but a success counts as local failing too (a local 404 for a model that was never pulled
   * is not passed off as the answer); otherwise a local 4xx about the request itself is the answer.
   */
  private CompletionStage<LocalTry> tryLocal(GatewayRequest request, boolean failover) {
    if (Boolean.TRUE.equals(request.attribute(RequestAttributes.PREFER_LOCAL))) {
      RequestOutcome.of(request).localByPreference(true); // shaping's local step took effect
    }
    if (ClientDisconnect.of(request).happened()) {
      return CompletableFuture.completedFuture(
          new LocalTry(null, Refusals.error(request, BackendKind.LOCAL, BackendCalls.clientClosed()), null));
    }
    if (request.route() == Route.EMBEDDINGS && !localModels.mapsExplicitly(request.model())) {
      return CompletableFuture.completedFuture(LocalTry.failed(LocalFailure.unsupported(embeddingsNotMapped(request))));
    }
    if (local == null) {
      return CompletableFuture.completedFuture(LocalTry.failed(LocalFailure.disabled()));
    }
    if (!local.ready()) {
      return CompletableFuture.completedFuture(LocalTry.failed(LocalFailure.notReady()));
    }
    return call(local, request).handle((attempt, thrown) -> {
      if (thrown != null) {
        if (Blocking.cause(thrown) instanceof GatewayException refused) {
          return new LocalTry(null, Refusals.error(request, local.kind(), refused), null);
        }
        throw Blocking.rethrow(Blocking.cause(thrown));
      }
      if (attempt.failure() instanceof UnsupportedOnLocalException unsupported) {
        return LocalTry.failed(LocalFailure.unsupported(unsupported));
      }
      Outcome outcome = attempt.verdict().outcome();
      boolean failed = failover ? outcome != Outcome.SUCCESS : outcome.failsOver();
      if (!failed) {
        return new LocalTry(attempt, null, null);
      }
      log.warn("request {}: the local backend could not serve it ({})", request.id(), attempt.verdict().rule());
      attempt.discard();
      return LocalTry.failed(LocalFailure.answered(attempt.verdict()));
    });
  }

  /** What one local try came to: exactly one of the three is set. */
  private record LocalTry(Attempt served, GatewayResponse refusedByGate, LocalFailure failure) {
    static LocalTry failed(LocalFailure failure) {
      return new LocalTry(null, null, failure);
    }
  }

  /**
   * Embeddings of a model that {@code local.models} does not map explicitly: a local model's vectors
   * would not match the ones the client already stored, so local refuses them like any request it
   * cannot serve (the cloud is tried where it may; the status and {@code Retry-After} come from the
   * breaker).
   */
  private static UnsupportedOnLocalException embeddingsNotMapped(GatewayRequest request) {
    return new UnsupportedOnLocalException(List.of("embeddings of '" + request.model()
        + "' (local.models has no entry for it, and another model's vectors would not match the ones"
        + " already computed with it; map it to a local embedding model in local.models)"),
        "Embeddings API", "model");
  }

  /**
   * The answer the client gets from a cloud {@code route}, or from local when {@code route} is null:
   * its response, or its failure as an error body.
   */
  private GatewayResponse answer(GatewayRequest request, CloudRoute route, Attempt attempt) {
    RequestOutcome.of(request).servedBy(route != null ? route.backend().kind() : local.kind());
    GatewayResponse response = attempt.response() != null ? attempt.response() : ErrorMapper.toResponse(attempt.failure());
    int status = response.status();
    if ((status == 429 || status == 503) && !response.headers().contains("retry-after")) {
      Duration wait = attempt.verdict().retryAfter() != null ? attempt.verdict().retryAfter()
          : route != null ? route.breaker().retryAfter(null) : retryAfter(null);
      response = response.withHeader("retry-after", Long.toString(ErrorMapper.retryAfterSeconds(wait)));
    }
    return route != null ? routed(request, route, response) : response;
  }

  /** Names the cloud route a response is charged to in the request's outcome ({@value #ROUTE_HEADER}). */
  private static GatewayResponse routed(GatewayRequest request, CloudRoute route, GatewayResponse response) {
    RequestOutcome.of(request).route(route.name());
    return response;
  }

  private static GatewayResponse withFallback(GatewayRequest request, GatewayResponse response, LocalFailure failure) {
    RequestOutcome.of(request).fellBack(failure.cause().tag());
    return response;
  }

  /**
   * Builds a {@link Router}; every part is required except {@code local} (null: no local backend),
   * {@code gate} and {@code listener}.
   */
  public static final class Builder {
    private List<CloudRoute> routes;
    private Backend cloud;
    private Backend local;
    private Breaker breaker;
    private CapacityClassifier classifier;
    private AdmissionGate gate;
    private Boolean retryLocally;
    private LocalModelList localModels;
    private Ticker ticker;
    private RouterListener listener = RouterListener.NONE;

    private Builder() {}

    /** The cloud routes in the order they are tried; replaces {@link #cloud} and {@link #breaker}. */
    public Builder routes(List<CloudRoute> routes) {
      this.routes = routes;
      return this;
    }

    /** The one cloud route's backend (with {@link #breaker}), when there is no list of {@link #routes}. */
    public Builder cloud(Backend cloud) {
      this.cloud = cloud;
      return this;
    }

    /** The local backend, or null when there is none ({@code local.enabled: false}). */
    public Builder local(Backend local) {
      this.local = local;
      return this;
    }

    public Builder breaker(Breaker breaker) {
      this.breaker = breaker;
      return this;
    }

    public Builder classifier(CapacityClassifier classifier) {
      this.classifier = classifier;
      return this;
    }

    public Builder admission(AdmissionGate gate) {
      this.gate = gate;
      return this;
    }

    /** {@code failover.retryLocally}: whether a request that got a capacity answer is retried on local once. */
    public Builder retryLocally(boolean retryLocally) {
      this.retryLocally = retryLocally;
      return this;
    }

    public Builder localModels(LocalModelList localModels) {
      this.localModels = localModels;
      return this;
    }

    /** What times each backend call ({@link Ticker#system()} in production). */
    public Builder ticker(Ticker ticker) {
      this.ticker = ticker;
      return this;
    }

    /** Told what the router does with each request (meters, ...); none by default. */
    public Builder listener(RouterListener listener) {
      this.listener = Objects.requireNonNull(listener, "listener");
      return this;
    }

    public Router build() {
      Router router = new Router(this);
      for (CloudRoute route : router.routes) {
        route.breaker().addListener(new BreakerListener() {
          @Override
          public void onStreakStarted(String route) {
            router.warmUpLocal();
          }
        });
      }
      return router;
    }
  }
}
