package io.spillway.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.FailoverConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.routing.breaker.ReplicaBreaker;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Verdict;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The router's bookkeeping that a client cannot see: admission permits, the probe slot, warm-up.
 * Backends here are in-memory; the wire behaviour is tested end to end in gateway-app.
 */
class RouterTest {
  static final String CAPACITY_BODY =
      "{\"error\":{\"message\":\"Selected model is at capacity. Please try a different model.\","
          + "\"type\":\"server_error\",\"param\":null,\"code\":null}}";

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final BreakerSettings config = BreakerSettings.DEFAULTS;
  final Breaker breaker = new ReplicaBreaker(config, clock);
  final RecordingGate gate = new RecordingGate();
  final List<String> told = new CopyOnWriteArrayList<>();

  /** What the router tells its listener, written down as text. */
  final RouterListener listener = new RouterListener() {
    @Override
    public void onAttempt(BackendKind backend, Verdict verdict, long nanos) {
      told.add("attempt " + backend.tag() + " " + verdict.outcome().tag() + " " + Duration.ofNanos(nanos));
    }

    @Override
    public void onCapacityAnswer(String route, Verdict verdict) {
      told.add("capacity answer " + route + " " + verdict.rule());
    }

    @Override
    public void onFailover(String route, Verdict verdict) {
      told.add("failover " + route + " " + verdict.outcome().tag());
    }

    @Override
    public void onFallback(String cause) {
      told.add("fallback " + cause);
    }

    @Override
    public void onUnavailable() {
      told.add("unavailable");
    }
  };

  Terminal router(Backend cloud, Backend local) {
    Router router = Router.builder()
        .cloud(cloud)
        .local(local)
        .breaker(breaker)
        .classifier(new CapacityClassifier(clock))
        .admission(gate)
        .retryLocally(FailoverConfig.DEFAULTS.retryLocally())
        .localModels(new LocalModelList(LocalConfig.DEFAULTS, clock.instant()))
        .ticker(clock)
        .listener(listener)
        .build();
    // As the pipeline answers: the headers stage writes x-spillway-* from the outcome the router wrote.
    return request -> router.handle(request).thenApply(response -> OutcomeHeadersInterceptor.write(RequestOutcome.of(request), response));
  }

  static GatewayRequest request(boolean stream) {
    ObjectNode body = Json.object();
    body.put("model", "gpt-4o");
    body.put("stream", stream);
    return GatewayRequest.create("req_1", Route.CHAT_COMPLETIONS, Headers.EMPTY, body, null,
        java.time.Instant.parse("2026-11-10T10:00:00Z"));
  }

  static GatewayResponse capacity() {
    return GatewayResponse.json(503, CAPACITY_BODY.getBytes(StandardCharsets.UTF_8));
  }

  static GatewayResponse ok() {
    return GatewayResponse.json(200, "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[]}"
        .getBytes(StandardCharsets.UTF_8));
  }

  static GatewayResponse stream(String... data) {
    return GatewayResponse.streamed(200, Headers.EMPTY, new ListStream(data));
  }

  @Test
  void eachCallIsTimedOnTheInjectedTickerAndToldToTheListener() {
    Terminal router = router(backend(BackendKind.CLOUD, r -> {
      clock.advance(Duration.ofMillis(1500));
      return capacity();
    }), backend(BackendKind.LOCAL, r -> {
      clock.advance(Duration.ofMillis(250));
      return ok();
    }));

    Blocking.await(router.handle(request(false)));

    assertThat(told).hasSize(4);
    assertThat(told.get(0)).isEqualTo("attempt cloud capacity PT1.5S");
    assertThat(told.get(1)).startsWith("capacity answer cloud ");
    assertThat(told.subList(2, 4)).containsExactly("failover cloud capacity", "attempt local success PT0.25S");
  }

  @Test
  void neitherBackendServingIsToldAsUnavailable() {
    Terminal router = router(backend(BackendKind.CLOUD, r -> capacity()), null);

    assertThat(Blocking.await(router.handle(request(false))).status()).isEqualTo(503);

    assertThat(told).contains("unavailable");
  }

  @Test
  void aStreamHoldsItsPermitUntilItIsClosed() {
    Terminal router = router(backend(BackendKind.CLOUD, r -> stream("{\"choices\":[]}", "{\"choices\":[]}", "[DONE]")), null);

    GatewayResponse response = Blocking.await(router.handle(request(true)));

    assertThat(gate.inFlight()).isEqualTo(1);
    assertThat(response.stream().next()).isNotNull();
    assertThat(gate.inFlight()).isEqualTo(1);
    response.stream().close();
    assertThat(gate.inFlight()).isZero();
    response.stream().close();
    assertThat(gate.inFlight()).isZero();
  }

  @Test
  void aStreamGivesItsPermitBackWhenItEnds() {
    Terminal router = router(backend(BackendKind.CLOUD, r -> stream("{\"choices\":[]}", "[DONE]")), null);
    EventStream stream = Blocking.await(router.handle(request(true))).stream();

    assertThat(stream.started()).isFalse();
    while (stream.next() != null) {
      assertThat(stream.started()).isTrue();
    }

    assertThat(gate.inFlight()).isZero();
  }

  @Test
  void aBufferedAnswerGivesItsPermitBackAtOnce() {
    Blocking.await(router(backend(BackendKind.CLOUD, r -> ok()), null).handle(request(false)));

    assertThat(gate.events).containsExactly("enter cloud", "leave cloud");
  }

  @Test
  void aFailedCloudAttemptGivesItsPermitBackBeforeLocalIsEntered() {
    Terminal router = router(backend(BackendKind.CLOUD, r -> capacity()), backend(BackendKind.LOCAL, r -> stream("{\"choices\":[]}", "[DONE]")));

    GatewayResponse response = Blocking.await(router.handle(request(true)));

    assertThat(response.headers().get("x-spillway-backend")).isEqualTo("local");
    assertThat(gate.events).containsExactly("enter cloud", "leave cloud", "enter local");
    response.stream().close();
    assertThat(gate.inFlight()).isZero();
  }

  @Test
  void aStreamThatOpensWithACapacityErrorIsClosedAndRetriedLocally() {
    ListStream cloudStream = new ListStream(CAPACITY_BODY);
    Terminal router = router(backend(BackendKind.CLOUD, r -> GatewayResponse.streamed(200, Headers.EMPTY, cloudStream)),
        backend(BackendKind.LOCAL, r -> ok()));

    GatewayResponse response = Blocking.await(router.handle(request(true)));

    assertThat(response.headers().get("x-spillway-backend")).isEqualTo("local");
    assertThat(cloudStream.closed).isTrue();
    assertThat(gate.inFlight()).isZero();
    assertThat(breaker.streak()).isEqualTo(1);
  }

  @Test
  void aProbeRefusedByAdmissionGoesBackToThePool() {
    Terminal router = router(backend(BackendKind.CLOUD, r -> capacity()), backend(BackendKind.LOCAL, r -> ok()));
    for (int i = 0; i < config.capacityStreak(); i++) {
      Blocking.await(router.handle(request(false)));
    }
    clock.advance(config.localFor());
    gate.refuse(BackendKind.CLOUD);

    GatewayResponse refused = Blocking.await(router.handle(request(false)));

    assertThat(refused.status()).isEqualTo(429);
    assertThat(refused.headers().get("retry-after")).isEqualTo("2");
    assertThat(refused.headers().get("x-spillway-backend")).isEqualTo("cloud");
    assertThat(breaker.acquire().target()).isEqualTo(Breaker.Target.PROBE);
  }

  @Test
  void theFirstCapacityAnswerOfAStreakWarmsTheLocalBackend() {
    AtomicInteger warmUps = new AtomicInteger();
    Backend local = new Backend() {
      @Override
      public BackendKind kind() {
        return BackendKind.LOCAL;
      }

      @Override
      public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
        return Blocking.supply(() -> {
          return ok();
        });
      }

      @Override
      public void warmUp() {
        warmUps.incrementAndGet();
      }
    };
    Terminal router = router(backend(BackendKind.CLOUD, r -> capacity()), local);

    Blocking.await(router.handle(request(false)));
    Blocking.await(router.handle(request(false)));

    await().atMost(Duration.ofSeconds(5)).untilAtomic(warmUps, org.hamcrest.Matchers.equalTo(1));
  }

  @Test
  void preferLocalNeverKeepsARequestFromBeingTheHalfOpenProbe() {
    AtomicInteger cloudCalls = new AtomicInteger();
    Terminal router = router(backend(BackendKind.CLOUD, r -> cloudCalls.incrementAndGet() <= config.capacityStreak()
        ? capacity() : ok()), backend(BackendKind.LOCAL, r -> ok()));
    for (int i = 0; i < config.capacityStreak(); i++) {
      Blocking.await(router.handle(request(false)));
    }
    clock.advance(config.localFor());
    GatewayRequest preferLocal = request(false);
    preferLocal.setAttribute(RequestAttributes.PREFER_LOCAL, true);

    GatewayResponse response = Blocking.await(router.handle(preferLocal));

    assertThat(response.headers().get("x-spillway-backend")).isEqualTo("cloud");
    assertThat(RequestOutcome.of(preferLocal).backend()).isEqualTo(BackendKind.CLOUD);
    assertThat(RequestOutcome.of(preferLocal).localByPreference()).as("the preference did not take effect").isFalse();
    assertThat(RequestOutcome.of(preferLocal).degraded()).doesNotContain(RequestOutcome.LOCAL_STEP);
    assertThat(cloudCalls).hasValue(config.capacityStreak() + 1);
    assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
  }

  @Test
  void preferLocalWhileClosedIsServedLocallyAndLeavesTheBreakerAlone() {
    AtomicInteger cloudCalls = new AtomicInteger();
    Terminal router = router(backend(BackendKind.CLOUD, r -> {
      cloudCalls.incrementAndGet();
      return ok();
    }), backend(BackendKind.LOCAL, r -> ok()));
    GatewayRequest preferLocal = request(false);
    preferLocal.setAttribute(RequestAttributes.PREFER_LOCAL, true);

    GatewayResponse response = Blocking.await(router.handle(preferLocal));

    assertThat(response.headers().get("x-spillway-backend")).isEqualTo("local");
    assertThat(response.headers().get("x-spillway-fallback")).isNull();
    assertThat(RequestOutcome.of(preferLocal).localByPreference()).isTrue();
    assertThat(RequestOutcome.of(preferLocal).degraded()).containsExactly(RequestOutcome.LOCAL_STEP);
    assertThat(cloudCalls).hasValue(0);
    assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
  }

  @Test
  void theFallbackWhileOpenIsNotTheProbeAndMovesNothingInTheBreaker() {
    AtomicInteger cloudCalls = new AtomicInteger();
    Terminal router = router(backend(BackendKind.CLOUD, r -> {
      cloudCalls.incrementAndGet();
      return capacity();
    }), backend(BackendKind.LOCAL, r -> GatewayResponse.json(500, "{\"error\":\"boom\"}".getBytes(StandardCharsets.UTF_8))));
    for (int i = 0; i < config.capacityStreak(); i++) {
      Blocking.await(router.handle(request(false)));
    }
    String nextProbe = breaker.status().toJson().get("nextProbeAt").asText();
    clock.advance(Duration.ofMinutes(1));

    GatewayResponse response = Blocking.await(router.handle(request(false)));

    assertThat(cloudCalls).hasValue(config.capacityStreak() + 1);
    assertThat(response.status()).isEqualTo(503);
    assertThat(response.headers().get("x-spillway-fallback")).isEqualTo("local_error");
    assertThat(response.headers().get("retry-after")).isEqualTo("240");
    assertThat(breaker.status().toJson().get("nextProbeAt").asText()).as("a capacity answer does not lengthen open")
        .isEqualTo(nextProbe);
    assertThat(breaker.history()).hasSize(1);
  }

  @Test
  void aSuccessfulFallbackWhileOpenDoesNotCloseTheBreakerEarly() {
    AtomicInteger cloudCalls = new AtomicInteger();
    Terminal router = router(backend(BackendKind.CLOUD, r -> cloudCalls.incrementAndGet() <= config.capacityStreak()
        ? capacity() : ok()), backend(BackendKind.LOCAL, r -> {
          throw new io.spillway.core.error.UpstreamException("local",
              io.spillway.core.error.UpstreamException.Failure.CONNECT_FAILED, "refused", null);
        }));
    for (int i = 0; i < config.capacityStreak(); i++) {
      Blocking.await(router.handle(request(false)));
    }

    GatewayResponse response = Blocking.await(router.handle(request(false)));

    assertThat(response.status()).isEqualTo(200);
    assertThat(response.headers().get("x-spillway-backend")).isEqualTo("cloud");
    assertThat(response.headers().get("x-spillway-fallback")).isEqualTo("local_unreachable");
    assertThat(breaker.state()).as("only the probe closes the breaker").isEqualTo(Breaker.State.OPEN);
  }

  @Test
  void aFallbackFromAPreferLocalRequestWhileClosedCountsTowardTheStreak() {
    Terminal router = router(backend(BackendKind.CLOUD, r -> capacity()), null);
    GatewayRequest preferLocal = request(false);
    preferLocal.setAttribute(RequestAttributes.PREFER_LOCAL, true);

    GatewayResponse response = Blocking.await(router.handle(preferLocal));

    assertThat(response.status()).isEqualTo(503);
    assertThat(response.headers().get("x-spillway-fallback")).isEqualTo("local_disabled");
    assertThat(RequestOutcome.of(preferLocal).localByPreference()).as("the cloud answered after all").isFalse();
    assertThat(RequestOutcome.of(preferLocal).degraded()).doesNotContain(RequestOutcome.LOCAL_STEP);
    assertThat(breaker.streak()).as("an ordinary cloud request in a closed breaker").isEqualTo(1);
  }

  @Test
  void aLocalBackendThatIsNotReadyIsNotCalled() {
    AtomicInteger calls = new AtomicInteger();
    Backend local = new Backend() {
      @Override
      public BackendKind kind() {
        return BackendKind.LOCAL;
      }

      @Override
      public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
        return Blocking.supply(() -> {
          calls.incrementAndGet();
          return ok();
        });
      }

      @Override
      public boolean ready() {
        return false;
      }
    };

    GatewayResponse response = Blocking.await(router(backend(BackendKind.CLOUD, r -> capacity()), local).handle(request(false)));

    assertThat(response.status()).isEqualTo(503);
    assertThat(response.headers().get("retry-after")).isEqualTo("1");
    assertThat(new String(response.body(), StandardCharsets.UTF_8)).contains("not ready");
    assertThat(calls).hasValue(0);
  }

  @Test
  void aLocalRejectionDuringFailoverIsNotPassedOffAsTheAnswer() {
    byte[] notFound = "{\"error\":{\"message\":\"model 'qwen2.5-coder:7b' not found\",\"type\":\"api_error\"}}"
        .getBytes(StandardCharsets.UTF_8);
    Terminal router = router(backend(BackendKind.CLOUD, r -> capacity()), backend(BackendKind.LOCAL, r -> GatewayResponse.json(404, notFound)));

    GatewayResponse response = Blocking.await(router.handle(request(false)));

    assertThat(response.status()).isEqualTo(503);
    assertThat(response.headers().get("retry-after")).isNotNull();
    assertThat(new String(response.body(), StandardCharsets.UTF_8)).contains("model_at_capacity");
  }

  @Test
  void aLocalRejectionWhileTrafficIsLocalReachesTheClient() {
    byte[] invalid = "{\"error\":{\"message\":\"invalid temperature\",\"type\":\"invalid_request_error\"}}"
        .getBytes(StandardCharsets.UTF_8);
    Terminal router = router(backend(BackendKind.CLOUD, r -> capacity()), backend(BackendKind.LOCAL, r -> GatewayResponse.json(400, invalid)));
    breaker.override(Breaker.OverrideMode.OPEN);

    GatewayResponse response = Blocking.await(router.handle(request(false)));

    assertThat(response.status()).isEqualTo(400);
    assertThat(response.headers().get("x-spillway-backend")).isEqualTo("local");
  }

  static Backend backend(BackendKind kind, Function<GatewayRequest, GatewayResponse> answer) {
    return TestBackends.blocking(kind, answer);
  }

  /** Records who entered and left; can refuse one backend as a full waiting area would. */
  static final class RecordingGate implements AdmissionGate {
    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger inFlight = new AtomicInteger();
    volatile BackendKind refused;

    void refuse(BackendKind backend) {
      refused = backend;
    }

    int inFlight() {
      return inFlight.get();
    }

    @Override
    public Permit enter(BackendKind backend, GatewayRequest request) {
      if (backend == refused) {
        throw ErrorKind.QUEUE_TIMEOUT.exception("waited too long").withRetryAfter(Duration.ofSeconds(2));
      }
      events.add("enter " + backend.tag());
      inFlight.incrementAndGet();
      return () -> {
        events.add("leave " + backend.tag());
        inFlight.decrementAndGet();
      };
    }
  }

  /** Events from a list; "[DONE]" ends it. */
  static final class ListStream implements EventStream {
    private final Deque<String> data;
    volatile boolean closed;
    private boolean started;

    ListStream(String... data) {
      this.data = new ArrayDeque<>(List.of(data));
    }

    @Override
    public SseEvent poll() {
      String next = data.poll();
      if (next == null) {
        return null;
      }
      started = true;
      return SseEvent.data(next);
    }

    @Override
    public void close() {
      closed = true;
    }

    @Override
    public boolean started() {
      return started;
    }
  }
}
