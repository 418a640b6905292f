package io.spillway.routing;

import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
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
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.time.Ticker;
import io.spillway.routing.RouteCalls.Passed;
import io.spillway.routing.RouteCalls.RouteFailure;
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
  private final RouteCalls calls;
  private final LocalTries localTries;
  private final LocalFirst localFirst;

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
    this.local = b.local;
    this.retryLocally = Objects.requireNonNull(b.retryLocally, "retryLocally");
    this.calls = new RouteCalls(routes, local, Objects.requireNonNull(b.classifier, "classifier"),
        b.gate != null ? b.gate : AdmissionGate.OPEN, Objects.requireNonNull(b.ticker, "ticker"), b.listener);
    this.localTries = new LocalTries(calls, Objects.requireNonNull(b.localModels, "localModels"));
    this.localFirst = new LocalFirst(calls, localTries);
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The cloud routes in the order they are tried. */
  public List<CloudRoute> routes() {
    return routes;
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

  /** One route's try: the client's answer, or the failure to carry on from; exactly one is set. */
  private record RouteTry(GatewayResponse response, RouteFailure failure) {}

  /** Whether deciding may wait on the network: a fleet breaker in Redis. */
  @Override
  public boolean mayBlock() {
    return calls.blocking;
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
      // With no local backend a breaker that opened on its own has nowhere to send the request: the
      // cloud is asked anyway (the local ticket moves nothing), and its own answer is the client's.
      boolean nowhereElse = local == null && !ticket.forcedLocal();
      if (ticket.target() == Breaker.Target.PROBE || (ticket.target() == Breaker.Target.CLOUD && !preferLocal)
          || nowhereElse) {
        int next = i + 1;
        return tryRoute(request, route, ticket).thenCompose(tried -> {
          if (tried.response() != null) {
            calls.release(passed);
            return CompletableFuture.completedFuture(tried.response());
          }
          return routesFrom(request, next, preferLocal, passed, tried.failure());
        });
      }
      passed.add(new Passed(route, ticket));
    }
    if (failed != null) {
      calls.release(passed);
      return afterRoutesFailed(request, failed);
    }
    return localFirst.localFirst(request, passed);
  }



  /**
   * One route, as the request's turn comes to it: its answer is the client's unless it is a capacity
   * answer or a transient failure (and {@code failover.retryLocally} is on), which moves the request
   * on to the next route and then local.
   */
  private CompletionStage<RouteTry> tryRoute(GatewayRequest request, CloudRoute route, Breaker.Ticket ticket) {
    return calls.call(route.backend(), request).handle((attempt, failure) -> {
      if (failure != null) {
        route.breaker().release(ticket);
        if (Blocking.cause(failure) instanceof GatewayException refused) {
          return new RouteTry(calls.routed(request, route, Refusals.error(request, route.backend().kind(), refused)), null);
        }
        throw Blocking.rethrow(Blocking.cause(failure));
      }
      if (attempt.verdict().outcome() != Outcome.SUCCESS && ClientDisconnect.of(request).happened()) {
        return new RouteTry(calls.clientGone(request, route, ticket, attempt), null);
      }
      Verdict verdict = calls.recordCloud(route, ticket, attempt);
      if (!verdict.outcome().failsOver() || !retryLocally) {
        return new RouteTry(calls.answer(request, route, attempt), null);
      }
      log.info("request {}: the cloud (route {}) gave a {} answer ({}); {}", request.id(), route.name(),
          verdict.outcome().tag(), verdict.rule(), local == null
              ? "trying the next route, if any (there is no local backend: local.enabled: false)"
              : "trying the next route or local");
      calls.listener.onFailover(route.name(), verdict);
      return new RouteTry(null, new RouteFailure(route, attempt, verdict));
    });
  }

  /** Every route that took the request failed it: the local backend once. */
  private CompletionStage<GatewayResponse> afterRoutesFailed(GatewayRequest request, RouteFailure failed) {
    Verdict verdict = failed.verdict();
    if (local == null) {
      return CompletableFuture.completedFuture(withoutLocal(request, failed));
    }
    log.info("request {}: retrying on the local backend", request.id());
    return localTries.tryLocal(request, true).thenApply(tried -> {
      if (tried.served() != null) {
        return calls.answer(request, null, tried.served());
      }
      if (tried.refusedByGate() != null) {
        return tried.refusedByGate();
      }
      LocalFailure failure = tried.failure();
      if (failure.unsupported() != null) {
        return calls.refusals.unsupported(request, failure.unsupported(), BackendKind.LOCAL,
            "The cloud, tried first, " + FailureWords.of(verdict), verdict);
      }
      if (verdict.outcome() == Outcome.TRANSIENT) {
        // "At capacity" would not say what happened: the cloud could not be reached at all.
        return calls.answer(request, failed.route(), failed.attempt());
      }
      return calls.refusals.unavailable(request, BackendKind.LOCAL,
          "The cloud model is at capacity, and " + failure.words() + " either", verdict.retryAfter());
    });
  }

  /**
   * What the client of a request every route failed gets when there is no local backend: a capacity
   * answer becomes 503 saying so, named after the cloud route that gave it, with the cloud's own
   * {@code Retry-After} (1 s when it sent none: nothing in Spillway holds the next try back, and
   * {@code failover.localFor} is about a local backend there is not); a transient failure is passed
   * on as the cloud gave it.
   */
  private GatewayResponse withoutLocal(GatewayRequest request, RouteFailure failed) {
    Verdict verdict = failed.verdict();
    log.info("request {}: the cloud (route {}) gave a {} answer and there is no local backend to retry on"
        + " (local.enabled: false)", request.id(), failed.route().name(), verdict.outcome().tag());
    if (verdict.outcome() == Outcome.TRANSIENT) {
      return calls.answer(request, failed.route(), failed.attempt());
    }
    failed.attempt().discard();
    Duration wait = verdict.retryAfter() != null ? verdict.retryAfter() : Duration.ofSeconds(1);
    calls.listener.onUnavailable();
    GatewayException refused = ErrorKind.CAPACITY.exception("The cloud model is at capacity, and there is no local"
        + " backend to fall back on (local.enabled: false). Retry after " + ErrorMapper.retryAfterSeconds(wait) + "s.")
        .withRetryAfter(wait);
    return calls.routed(request, failed.route(), Refusals.error(request, BackendKind.CLOUD, refused));
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
