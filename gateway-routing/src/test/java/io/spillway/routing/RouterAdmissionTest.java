package io.spillway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.FailoverConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
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
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The router holds an admission permit for exactly as long as the backend's answer lasts. */
class RouterAdmissionTest {
  private final List<String> entered = new ArrayList<>();
  private final AtomicInteger held = new AtomicInteger();
  private final AdmissionGate gate = (backend, request) -> {
    entered.add(backend.tag());
    held.incrementAndGet();
    return held::decrementAndGet;
  };

  @Test
  void bufferedAnswerGivesThePermitBackWhenItArrives() {
    Terminal router = router(backend(request -> {
      assertThat(held).as("called inside the permit").hasValue(1);
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    }), gate);

    GatewayResponse answer = Blocking.await(router.handle(request()));

    assertThat(answer.headers().get("x-spillway-backend")).isEqualTo("cloud");
    assertThat(entered).containsExactly("cloud");
    assertThat(held).hasValue(0);
  }

  @Test
  void failedCallGivesThePermitBack() {
    Terminal router = router(backend(request -> {
      throw new UpstreamException("cloud", UpstreamException.Failure.CONNECT_FAILED, "connection refused", null);
    }), gate);

    GatewayResponse answer = Blocking.await(router.handle(request()));

    assertThat(answer.status()).as("the cloud's own failure: there is no local backend here").isEqualTo(502);
    assertThat(held).hasValue(0);
  }

  @Test
  void streamHoldsThePermitUntilItEnds() {
    Terminal router = router(streaming(SseEvent.data("{\"a\":1}"), SseEvent.DONE), gate);

    EventStream stream = Blocking.await(router.handle(request())).stream();
    assertThat(held).hasValue(1);
    assertThat(stream.next()).isNotNull();
    assertThat(stream.next()).isEqualTo(SseEvent.DONE);
    assertThat(held).as("still open until the end is read").hasValue(1);
    assertThat(stream.next()).isNull();
    assertThat(held).hasValue(0);
    stream.close();
    assertThat(held).as("closing after the end gives nothing back twice").hasValue(0);
  }

  @Test
  void streamClosedEarlyGivesThePermitBack() {
    Terminal router = router(streaming(SseEvent.data("{\"a\":1}"), SseEvent.DONE), gate);

    EventStream stream = Blocking.await(router.handle(request())).stream();
    stream.next();
    stream.close();

    assertThat(held).hasValue(0);
  }

  @Test
  void refusedAdmissionNeverCallsTheBackend() {
    AtomicInteger calls = new AtomicInteger();
    AdmissionGate full = (backend, request) -> {
      throw ErrorKind.UNAVAILABLE.exception("full");
    };
    Terminal router = router(backend(request -> {
      calls.incrementAndGet();
      return GatewayResponse.json(200, new byte[0]);
    }), full);

    GatewayResponse answer = Blocking.await(router.handle(request()));

    assertThat(answer.status()).isEqualTo(503);
    assertThat(answer.headers().get("retry-after")).isNotNull();
    assertThat(calls).hasValue(0);
  }

  /** The router with only a cloud backend (local.enabled: false). */
  private static Terminal router(Backend cloud, AdmissionGate gate) {
    FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
    Router router = Router.builder()
        .cloud(cloud)
        .breaker(new ReplicaBreaker(BreakerSettings.DEFAULTS, clock))
        .classifier(new CapacityClassifier(clock))
        .admission(gate)
        .retryLocally(FailoverConfig.DEFAULTS.retryLocally())
        .localModels(new LocalModelList(LocalConfig.DEFAULTS, clock.instant()))
        .ticker(clock)
        .build();
    // As the pipeline answers: the headers stage writes x-spillway-* from the outcome the router wrote.
    return request -> router.handle(request).thenApply(response -> OutcomeHeadersInterceptor.write(RequestOutcome.of(request), response));
  }

  private static Backend streaming(SseEvent... events) {
    return backend(request -> GatewayResponse.streamed(200, Headers.EMPTY, new ListStream(events)));
  }

  private static Backend backend(Function<GatewayRequest, GatewayResponse> answer) {
    return TestBackends.blocking(BackendKind.CLOUD, answer);
  }

  private static GatewayRequest request() {
    return GatewayRequest.create("req", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object(), null,
        Instant.parse("2026-11-10T10:00:00Z"));
  }

  private static final class ListStream implements EventStream {
    private final Queue<SseEvent> events;
    private boolean started;

    ListStream(SseEvent... events) {
      this.events = new ArrayDeque<>(List.of(events));
    }

    @Override
    public SseEvent poll() {
      started = true;
      return events.poll();
    }

    @Override
    public void close() {
      events.clear();
    }

    @Override
    public boolean started() {
      return started;
    }
  }
}
