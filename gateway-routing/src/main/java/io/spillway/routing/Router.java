package io.spillway.routing;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.spillway.core.config.FailoverConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import io.spillway.routing.internal.OncePermit;
import io.spillway.routing.internal.StartedStream;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The terminal stage: picks the backend for a request, calls it through the admission gate, and
 * fails over to the local backend when the cloud cannot serve.
 *
 * <ul>
 *   <li>The {@link Breaker} decides: closed → cloud, open → local, half-open → one probe to the cloud
 *       and everyone else local. {@link RequestAttributes#ROUTE_LOCAL} sends a request local
 *       whatever the breaker says (and never makes it the probe).
 *   <li>Request-level failover: when the cloud's answer is a capacity answer or a transient failure
 *       (see {@link CapacityClassifier}), the request is sent once to the local backend before its
 *       client sees anything. A stream counts as answered only once its first event has arrived, so
 *       a stream that fails before that is still retried; one that fails later ends with an error
 *       event (written by the front end), never with a second backend's answer spliced in.
 *   <li>When local cannot serve either (disabled, not ready, or anything but a success on a
 *       failover): 503 with {@code Retry-After} from {@link Breaker#retryAfter}; except after a
 *       transient cloud failure, where the client gets that failure (502, 504) as it would have
 *       without failover. Rate-limit, quota and final answers pass through as they are, with
 *       {@code Retry-After} on every 429 and 503.
 *   <li>Every response carries {@code x-spillway-backend} and sets {@link RequestAttributes#BACKEND}.
 * </ul>
 *
 * <p>Each backend call holds a permit from the {@link AdmissionGate}; a stream holds it until it ends
 * or is closed. A request whose client has gone ({@link ClientDisconnect}) stops waiting for a
 * permit and is never failed over. Thread-safe: one instance serves all requests.
 */
public final class Router implements Terminal {
  private static final Logger log = LoggerFactory.getLogger(Router.class);
  public static final String BACKEND_HEADER = "x-spillway-backend";
  static final String LOCAL_NAME = "local";

  private final Backend cloud;
  private final Backend local;
  private final Breaker breaker;
  private final CapacityClassifier classifier;
  private final AdmissionGate gate;
  private final FailoverConfig config;
  private final LocalModelList localModels;
  private final MeterRegistry meters;

  private Router(Builder b) {
    this.cloud = Objects.requireNonNull(b.cloud, "cloud");
    this.local = b.local;
    this.breaker = Objects.requireNonNull(b.breaker, "breaker");
    this.classifier = Objects.requireNonNull(b.classifier, "classifier");
    this.gate = b.gate != null ? b.gate : AdmissionGate.OPEN;
    this.config = Objects.requireNonNull(b.config, "config");
    this.localModels = Objects.requireNonNull(b.localModels, "localModels");
    this.meters = Objects.requireNonNull(b.meters, "meters");
  }

  public static Builder builder() {
    return new Builder();
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

  @Override
  public GatewayResponse handle(GatewayRequest request) {
    if (request.route() == Route.MODELS) {
      return models(request);
    }
    if (Boolean.TRUE.equals(request.attribute(RequestAttributes.ROUTE_LOCAL))) {
      return serveLocally(request, null, "This request is routed to the local backend");
    }
    Breaker.Ticket ticket = breaker.acquire();
    if (!ticket.cloud()) {
      return serveLocally(request, null, "Traffic is on the local backend while the cloud is at capacity");
    }
    Attempt attempt;
    try {
      attempt = attempt(cloud, request);
    } catch (GatewayException refused) {
      breaker.release(ticket);
      return refused(request, cloud.name(), refused);
    } catch (RuntimeException | Error e) {
      breaker.release(ticket);
      throw e;
    }
    Verdict verdict = attempt.verdict();
    if (verdict.outcome() != Outcome.SUCCESS && ClientDisconnect.of(request).happened()) {
      // Its call was cancelled, or it failed with nobody waiting: no failover. Only a real capacity
      // answer tells the breaker something about the cloud.
      if (verdict.outcome() == Outcome.CAPACITY) {
        breaker.record(ticket, verdict);
      } else {
        breaker.release(ticket);
      }
      attempt.discard();
      return refused(request, cloud.name(), clientClosed());
    }
    breaker.record(ticket, verdict);
    if (verdict.outcome() == Outcome.CAPACITY) {
      Counter.builder("spillway.breaker.capacity.answers")
          .description("Capacity answers from the cloud, by the classifier row that matched")
          .tag("rule", verdict.rule())
          .register(meters)
          .increment();
    }
    if (!verdict.outcome().failsOver() || !config.retryLocally()) {
      return answer(request, cloud.name(), attempt);
    }
    log.info("request {}: the cloud gave a {} answer ({}); retrying on the local backend",
        request.id(), verdict.outcome().tag(), verdict.rule());
    Counter.builder("spillway.failovers")
        .description("Requests retried on the local backend after the cloud could not serve them")
        .tag("reason", verdict.outcome().tag())
        .register(meters)
        .increment();
    return serveLocally(request, attempt, "The cloud model is at capacity");
  }

  /**
   * Serves on local. {@code cloudAttempt} is the cloud's failed answer when this is a failover;
   * {@code situation} starts the error message if local cannot serve.
   */
  private GatewayResponse serveLocally(GatewayRequest request, Attempt cloudAttempt, String situation) {
    if (ClientDisconnect.of(request).happened()) {
      return refused(request, LOCAL_NAME, clientClosed());
    }
    if (local == null) {
      return unavailable(request, cloudAttempt, situation, "there is no local backend (local.enabled: false)");
    }
    if (!local.ready()) {
      return unavailable(request, cloudAttempt, situation, "the local backend is not ready");
    }
    Attempt attempt;
    try {
      attempt = attempt(local, request);
    } catch (GatewayException refused) {
      return refused(request, local.name(), refused);
    }
    boolean failed = cloudAttempt != null
        ? attempt.verdict().outcome() != Outcome.SUCCESS
        : attempt.verdict().outcome().failsOver();
    if (failed) {
      log.warn("request {}: the local backend could not serve it either ({})", request.id(), attempt.verdict().rule());
      attempt.discard();
      return unavailable(request, cloudAttempt, situation,
          "the local backend could not serve it either (" + attempt.verdict().rule() + ")");
    }
    return answer(request, local.name(), attempt);
  }

  private GatewayResponse models(GatewayRequest request) {
    Breaker.State state = breaker.state();
    boolean trafficIsLocal = Boolean.TRUE.equals(request.attribute(RequestAttributes.ROUTE_LOCAL))
        || state == Breaker.State.OPEN || state == Breaker.State.FORCED_OPEN;
    if (!trafficIsLocal) {
      try {
        Attempt attempt = attempt(cloud, request);
        if (!attempt.verdict().outcome().failsOver()) {
          return answer(request, cloud.name(), attempt);
        }
      } catch (GatewayException refused) {
        // Admission is full: the model list does not need the cloud, the local map answers.
      }
    }
    request.setAttribute(RequestAttributes.BACKEND, LOCAL_NAME);
    return localModels.response().withHeader(BACKEND_HEADER, LOCAL_NAME);
  }

  /** The answer the client gets from {@code backend}: its response, or its failure as an error body. */
  private GatewayResponse answer(GatewayRequest request, String backend, Attempt attempt) {
    request.setAttribute(RequestAttributes.BACKEND, backend);
    GatewayResponse response = attempt.response() != null ? attempt.response() : GatewayResponse.error(attempt.failure());
    int status = response.status();
    if ((status == 429 || status == 503) && !response.headers().contains("retry-after")) {
      Duration wait = attempt.verdict().retryAfter() != null ? attempt.verdict().retryAfter() : breaker.retryAfter(null);
      response = response.withHeader("retry-after", Long.toString(GatewayResponse.retryAfterSeconds(wait)));
    }
    return response.withHeader(BACKEND_HEADER, backend);
  }

  /** The admission gate refused the request for {@code backend} (429/503 with Retry-After). */
  private static GatewayResponse refused(GatewayRequest request, String backend, GatewayException e) {
    request.setAttribute(RequestAttributes.BACKEND, backend);
    return GatewayResponse.error(e).withHeader(BACKEND_HEADER, backend);
  }

  /**
   * Neither backend could serve. After a capacity answer (or with traffic local): 503 with
   * Retry-After from the breaker. After a transient cloud failure: the cloud's own failure (502,
   * 504, its 5xx), which says what really happened better than "at capacity" would.
   */
  private GatewayResponse unavailable(GatewayRequest request, Attempt cloudAttempt, String situation, String why) {
    if (cloudAttempt != null && cloudAttempt.verdict().outcome() == Outcome.TRANSIENT) {
      return answer(request, cloud.name(), cloudAttempt);
    }
    Duration upstreamWait = cloudAttempt != null ? cloudAttempt.verdict().retryAfter() : null;
    Duration retryAfter = breaker.retryAfter(upstreamWait);
    String message = situation + ", and " + why + ". Retry after "
        + GatewayResponse.retryAfterSeconds(retryAfter) + "s.";
    Counter.builder("spillway.router.unavailable")
        .description("Requests neither backend could serve (answered 503 with Retry-After)")
        .register(meters)
        .increment();
    request.setAttribute(RequestAttributes.BACKEND, LOCAL_NAME);
    GatewayException e = GatewayException.of(ErrorKind.CAPACITY, message, retryAfter);
    return GatewayResponse.error(e).withHeader(BACKEND_HEADER, LOCAL_NAME);
  }

  /**
   * One call to one backend, classified. A stream is read up to its first event, which decides
   * whether it started; the permit then travels with the stream. Throws only the admission gate's
   * refusal (a {@link GatewayException}); every failure of the backend itself is classified.
   */
  private Attempt attempt(Backend backend, GatewayRequest request) {
    OncePermit permit = new OncePermit(enter(backend, request));
    long start = System.nanoTime();
    GatewayResponse response;
    try {
      response = backend.call(request);
    } catch (GatewayException e) {
      permit.close();
      return timed(backend, start, Attempt.failed(e, classifier.classify(e)));
    } catch (RuntimeException e) {
      permit.close();
      throw e;
    }
    if (!response.isStream()) {
      permit.close();
      return timed(backend, start, Attempt.answered(response, classifier.classify(response)));
    }
    EventStream stream = response.stream();
    SseEvent first;
    try {
      first = stream.next();
    } catch (GatewayException e) {
      closeQuietly(stream, permit);
      return timed(backend, start, Attempt.failed(e, classifier.classify(e)));
    } catch (RuntimeException e) {
      closeQuietly(stream, permit);
      throw e;
    }
    if (first == null) {
      closeQuietly(stream, permit);
      UpstreamException e = new UpstreamException(backend.name(), UpstreamException.Failure.RESET_MID_STREAM,
          "The " + backend.name() + " backend ended the stream before its first event", null);
      return timed(backend, start, Attempt.failed(e, classifier.classify(e)));
    }
    Verdict verdict = classifier.classifyFirstEvent(first);
    if (verdict.outcome() != Outcome.SUCCESS) {
      closeQuietly(stream, permit);
      GatewayException e = GatewayException.of(
          verdict.outcome() == Outcome.CAPACITY ? ErrorKind.CAPACITY : ErrorKind.BAD_GATEWAY,
          "The " + backend.name() + " backend's stream began with an error", verdict.retryAfter());
      return timed(backend, start, Attempt.failed(e, verdict));
    }
    return timed(backend, start,
        Attempt.answered(response.withStream(new StartedStream(first, stream, permit)), verdict));
  }

  /**
   * Waits in the admission gate; a client that goes away meanwhile ends the wait (by interrupting
   * it) and its place is given up, as is a permit obtained just as it left.
   */
  private AdmissionGate.Permit enter(Backend backend, GatewayRequest request) {
    ClientDisconnect disconnect = ClientDisconnect.of(request);
    Thread waiter = Thread.currentThread();
    AdmissionGate.Permit permit;
    try (ClientDisconnect.Registration waiting = disconnect.onDisconnect(waiter::interrupt)) {
      permit = gate.enter(backend.name(), request);
    } catch (GatewayException e) {
      if (disconnect.happened()) {
        Thread.interrupted(); // the interrupt only ended the wait
        throw clientClosed();
      }
      throw e;
    }
    if (disconnect.happened()) {
      Thread.interrupted();
      permit.close();
      throw clientClosed();
    }
    return permit;
  }

  private static GatewayException clientClosed() {
    return GatewayException.of(ErrorKind.CLIENT_CLOSED, "The client closed its connection before the answer", null);
  }

  private Attempt timed(Backend backend, long startNanos, Attempt attempt) {
    Timer.builder("spillway.router.attempt.duration")
        .description("One backend call until its answer (a stream: until its first event), by backend and outcome")
        .tags("backend", backend.name(), "outcome", attempt.verdict().outcome().tag())
        .register(meters)
        .record(System.nanoTime() - startNanos, TimeUnit.NANOSECONDS);
    return attempt;
  }

  private static void closeQuietly(EventStream stream, OncePermit permit) {
    try {
      stream.close();
    } catch (RuntimeException ignored) {
      // The stream is being abandoned; its connection is discarded either way.
    } finally {
      permit.close();
    }
  }

  /** One backend call: exactly one of {@code response} and {@code failure} is set. */
  private record Attempt(GatewayResponse response, GatewayException failure, Verdict verdict) {
    /** Drops an answer that will not be sent (a stream's connection and permit are given back). */
    void discard() {
      if (response != null && response.isStream()) {
        response.stream().close();
      }
    }

    static Attempt answered(GatewayResponse response, Verdict verdict) {
      return new Attempt(response, null, verdict);
    }

    static Attempt failed(GatewayException failure, Verdict verdict) {
      return new Attempt(null, failure, verdict);
    }
  }

  /** Builds a {@link Router}; every part is required except {@code local} (null: no local backend) and {@code gate}. */
  public static final class Builder {
    private Backend cloud;
    private Backend local;
    private Breaker breaker;
    private CapacityClassifier classifier;
    private AdmissionGate gate;
    private FailoverConfig config;
    private LocalModelList localModels;
    private MeterRegistry meters;

    private Builder() {}

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

    public Builder failover(FailoverConfig config) {
      this.config = config;
      return this;
    }

    public Builder localModels(LocalModelList localModels) {
      this.localModels = localModels;
      return this;
    }

    public Builder meters(MeterRegistry meters) {
      this.meters = meters;
      return this;
    }

    public Router build() {
      Router router = new Router(this);
      breaker.addListener(new Breaker.Listener() {
        @Override
        public void streakStarted() {
          router.warmUpLocal();
        }
      });
      return router;
    }
  }
}
