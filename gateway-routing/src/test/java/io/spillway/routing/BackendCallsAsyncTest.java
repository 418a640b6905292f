package io.spillway.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.BackendCalls.Attempt;
import io.spillway.routing.capacity.CapacityClassifier;
import io.spillway.routing.capacity.Outcome;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link BackendCalls#callAsync}: the common path (a free place, a backend that answers without
 * blocking, a stream's first event pushed by its loop) takes no thread of its own and completes on
 * the thread the answer arrived on; only a wait in the admission gate moves to a virtual thread.
 * The gate's tiers (gold before silver before bronze) are PriorityAdmissionGateTest's.
 */
class BackendCallsAsyncTest {
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  /** Stands for an upstream connection's event loop: a platform thread. */
  final ExecutorService loop = Executors.newSingleThreadExecutor(task -> Thread.ofPlatform().name("loop").unstarted(task));
  final Gate gate = new Gate();
  final BackendCalls calls = new BackendCalls(new CapacityClassifier(clock), gate, clock, RouterListener.NONE);

  @AfterEach
  void stopLoop() {
    loop.shutdownNow();
  }

  @Test
  void callAsyncCompletesOnTheThreadTheAnswerArrivedOnWithoutAVirtualThread() throws Exception {
    CompletableFuture<GatewayResponse> upstream = new CompletableFuture<>();
    AtomicInteger backendCalls = new AtomicInteger();

    CompletionStage<Attempt> attempt = calls.callAsync(backend(request -> {
      backendCalls.incrementAndGet();
      return upstream;
    }), request(false));
    AtomicReference<Thread> completedOn = new AtomicReference<>();
    CompletableFuture<Attempt> done = attempt.toCompletableFuture().whenComplete((a, e) -> completedOn.set(Thread.currentThread()));

    assertThat(done).as("nobody waits for the answer").isNotDone();
    assertThat(backendCalls).hasValue(1);
    assertThat(gate.held).as("a free place was taken at once").hasValue(1);
    loop.submit(() -> upstream.complete(RouterTest.ok())).get(5, TimeUnit.SECONDS);

    assertThat(done.get(5, TimeUnit.SECONDS).response().status()).isEqualTo(200);
    assertThat(completedOn.get().getName()).isEqualTo("loop");
    assertThat(completedOn.get().isVirtual()).isFalse();
    assertThat(gate.waits).as("nothing waited in the gate").hasValue(0);
    assertThat(gate.held).as("a buffered answer gives its place back").hasValue(0);
  }

  @Test
  void gateFullWaitsOnAVirtualThreadThenAdmits() throws Exception {
    gate.full = true;

    CompletableFuture<Attempt> attempt = calls.callAsync(answering(RouterTest.ok()), request(false)).toCompletableFuture();
    assertThat(gate.waiting.await(5, TimeUnit.SECONDS)).isTrue();

    assertThat(attempt).isNotDone();
    assertThat(gate.waiter.get().isVirtual()).as("the wait runs where blocking is allowed").isTrue();
    gate.admit.countDown();
    assertThat(attempt.get(5, TimeUnit.SECONDS).response().status()).isEqualTo(200);
    assertThat(gate.held).hasValue(0);
  }

  @Test
  void clientGoneWhileWaitingForTheGateGivesUpThePlace() throws Exception {
    gate.full = true;
    ClientDisconnect disconnect = ClientDisconnect.create();
    AtomicInteger backendCalls = new AtomicInteger();
    GatewayRequest request = request(false);
    request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, disconnect);

    CompletableFuture<Attempt> attempt = calls.callAsync(backend(r -> {
      backendCalls.incrementAndGet();
      return CompletableFuture.completedFuture(RouterTest.ok());
    }), request).toCompletableFuture();
    assertThat(gate.waiting.await(5, TimeUnit.SECONDS)).isTrue();
    disconnect.signal();

    await().atMost(Duration.ofSeconds(5)).until(attempt::isDone);
    Throwable failure = Blocking.cause(attempt.handle((a, e) -> e).get());
    assertThat(failure).isInstanceOf(GatewayException.class);
    assertThat(((GatewayException) failure).kind()).isEqualTo(ErrorKind.CLIENT_CLOSED);
    assertThat(backendCalls).as("the backend is never called").hasValue(0);
    assertThat(gate.held).hasValue(0);
    assertThat(gate.waits).as("the wait ended by the interrupt").hasValue(1);
  }

  @Test
  void clientGoneBeforeAFreePlaceIsTakenGivesItBackAtOnce() {
    ClientDisconnect disconnect = ClientDisconnect.create();
    disconnect.signal();
    GatewayRequest request = request(false);
    request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, disconnect);

    CompletableFuture<Attempt> attempt = calls.callAsync(answering(RouterTest.ok()), request).toCompletableFuture();

    assertThat(attempt).isCompletedExceptionally();
    assertThat(gate.held).hasValue(0);
  }

  @Test
  void streamStartsAtItsFirstEventWithoutBlocking() throws Exception {
    PushedStream stream = new PushedStream();

    CompletableFuture<Attempt> attempt = calls.callAsync(answering(streamed(stream)), request(true)).toCompletableFuture();
    AtomicReference<Thread> completedOn = new AtomicReference<>();
    CompletableFuture<Attempt> done = attempt.whenComplete((a, e) -> completedOn.set(Thread.currentThread()));

    assertThat(done).as("the first event is not there yet, and nobody waits for it").isNotDone();
    loop.submit(() -> stream.push(SseEvent.data("{\"choices\":[]}"))).get(5, TimeUnit.SECONDS);

    Attempt started = done.get(5, TimeUnit.SECONDS);
    assertThat(started.verdict().outcome()).isEqualTo(Outcome.SUCCESS);
    assertThat(completedOn.get().getName()).isEqualTo("loop");
    assertThat(stream.pollers).noneMatch(Thread::isVirtual);
    assertThat(gate.held).as("the place travels with the stream").hasValue(1);
    EventStream relayed = started.response().stream();
    assertThat(relayed.poll().data()).isEqualTo("{\"choices\":[]}");
    relayed.close();
    assertThat(stream.closed()).isTrue();
    assertThat(gate.held).hasValue(0);
  }

  @Test
  void streamThatEndsBeforeItsFirstEventFailsAndGivesItsPlaceBack() throws Exception {
    PushedStream stream = new PushedStream();

    CompletableFuture<Attempt> attempt = calls.callAsync(answering(streamed(stream)), request(true)).toCompletableFuture();
    loop.submit(stream::end).get(5, TimeUnit.SECONDS);

    Attempt failed = attempt.get(5, TimeUnit.SECONDS);
    assertThat(failed.failure()).isInstanceOf(UpstreamException.class);
    assertThat(((UpstreamException) failed.failure()).failure()).isEqualTo(UpstreamException.Failure.RESET_MID_STREAM);
    assertThat(stream.closed()).isTrue();
    assertThat(gate.held).hasValue(0);
  }

  @Test
  void aFailedStageIsClassifiedAsTheBackendsFailure() throws Exception {
    UpstreamException refused = new UpstreamException("cloud", UpstreamException.Failure.CONNECT_FAILED, "refused", null);

    Attempt attempt = calls.callAsync(backend(r -> CompletableFuture.failedFuture(refused)), request(false))
        .toCompletableFuture().get(5, TimeUnit.SECONDS);

    assertThat(attempt.failure()).isSameAs(refused);
    assertThat(gate.held).hasValue(0);
  }

  @Test
  void callWaitsForTheSameAttempt() throws Exception {
    PushedStream stream = new PushedStream();
    stream.push(SseEvent.data("{\"choices\":[]}"));

    Attempt attempt = calls.call(answering(streamed(stream)), request(true));

    assertThat(attempt.response().isStream()).isTrue();
    assertThat(gate.held).hasValue(1);
    attempt.discard();
    assertThat(gate.held).hasValue(0);
  }

  static GatewayRequest request(boolean stream) {
    return RouterTest.request(stream);
  }

  static GatewayResponse streamed(EventStream stream) {
    return GatewayResponse.streamed(200, Headers.of("content-type", "text/event-stream"), stream);
  }

  static Backend answering(GatewayResponse response) {
    return backend(request -> CompletableFuture.completedFuture(response));
  }

  static Backend backend(Function<GatewayRequest, CompletionStage<GatewayResponse>> answer) {
    return TestBackends.async(BackendKind.CLOUD, answer);
  }

  /**
   * A gate of one place per call: free unless {@link #full}, when {@link #enter} blocks until it is
   * let in (or its thread is interrupted, as PriorityAdmissionGate's wait ends).
   */
  static final class Gate implements AdmissionGate {
    final AtomicInteger held = new AtomicInteger();
    final AtomicInteger waits = new AtomicInteger();
    final CountDownLatch waiting = new CountDownLatch(1);
    final CountDownLatch admit = new CountDownLatch(1);
    final AtomicReference<Thread> waiter = new AtomicReference<>();
    volatile boolean full;

    @Override
    public Permit tryEnter(BackendKind backend, GatewayRequest request) {
      return full ? null : permit();
    }

    @Override
    public Permit enter(BackendKind backend, GatewayRequest request) {
      if (!full) {
        return permit();
      }
      waits.incrementAndGet();
      waiter.set(Thread.currentThread());
      waiting.countDown();
      try {
        admit.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ErrorKind.UNAVAILABLE.exception("Request was cancelled while waiting for a turn");
      }
      return permit();
    }

    private Permit permit() {
      held.incrementAndGet();
      AtomicInteger once = new AtomicInteger();
      return () -> {
        if (once.getAndIncrement() == 0) {
          held.decrementAndGet();
        }
      };
    }
  }
}
