package io.spillway.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.FailoverConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.routing.breaker.ReplicaBreaker;
import io.spillway.routing.capacity.CapacityClassifier;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * A request whose client went away is never failed over, its admission wait ends, and a failure that
 * is only its own cancelled call does not count against the cloud. End to end (real sockets, the
 * upstream seeing its connection closed) in gateway-app's ClientDisconnectTest.
 */
class RouterClientDisconnectTest {
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final Breaker breaker = new ReplicaBreaker(BreakerSettings.DEFAULTS, clock);
  final AtomicInteger localCalls = new AtomicInteger();
  final Backend local = backend(BackendKind.LOCAL, request -> {
    localCalls.incrementAndGet();
    return RouterTest.ok();
  });

  Router router(Backend cloud, AdmissionGate gate) {
    return Router.builder()
        .cloud(cloud)
        .local(local)
        .breaker(breaker)
        .classifier(new CapacityClassifier(clock))
        .admission(gate)
        .retryLocally(FailoverConfig.DEFAULTS.retryLocally())
        .localModels(new LocalModelList(LocalConfig.DEFAULTS, clock.instant()))
        .ticker(clock)
        .build();
  }

  static GatewayRequest requestWith(ClientDisconnect disconnect, boolean stream) {
    GatewayRequest request = RouterTest.request(stream);
    request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, disconnect);
    return request;
  }

  @Test
  void aCapacityAnswerForAClientThatLeftIsNotRetriedLocally() {
    ClientDisconnect disconnect = ClientDisconnect.create();
    Router router = router(backend(BackendKind.CLOUD, request -> {
      disconnect.signal(); // the client leaves while the cloud works, and the cloud then says "at capacity"
      return RouterTest.capacity();
    }), AdmissionGate.OPEN);

    GatewayResponse answer = Blocking.await(router.handle(requestWith(disconnect, false)));

    assertThat(localCalls).as("nobody would receive the local answer").hasValue(0);
    assertThat(answer.status()).isEqualTo(ErrorKind.CLIENT_CLOSED.status());
  }

  @Test
  void aCallCancelledBecauseTheClientLeftIsNotRetriedLocallyNorCountedAgainstTheCloud() {
    ClientDisconnect disconnect = ClientDisconnect.create();
    Router router = router(backend(BackendKind.CLOUD, request -> {
      disconnect.signal();
      throw new UpstreamException("cloud", UpstreamException.Failure.RESET_BEFORE_RESPONSE, "Canceled", null);
    }), AdmissionGate.OPEN);

    for (int i = 0; i < BreakerSettings.DEFAULTS.capacityStreak() + 1; i++) {
      Blocking.await(router.handle(requestWith(disconnect, true)));
    }

    assertThat(localCalls).hasValue(0);
    assertThat(breaker.state()).isEqualTo(Breaker.State.CLOSED);
  }

  @Test
  void aClientThatLeavesWhileWaitingForAdmissionGivesUpItsPlace() throws Exception {
    ReentrantLock lock = new ReentrantLock();
    Condition never = lock.newCondition();
    CountDownLatch waiting = new CountDownLatch(1);
    AtomicInteger permits = new AtomicInteger();
    // A full waiting area that holds the caller until it is interrupted, as PriorityAdmissionGate does.
    AdmissionGate full = (backend, request) -> {
      lock.lock();
      try {
        waiting.countDown();
        never.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw ErrorKind.UNAVAILABLE.exception("interrupted");
      } finally {
        lock.unlock();
      }
      permits.incrementAndGet();
      return permits::decrementAndGet;
    };
    AtomicInteger cloudCalls = new AtomicInteger();
    Router router = router(backend(BackendKind.CLOUD, request -> {
      cloudCalls.incrementAndGet();
      return RouterTest.ok();
    }), full);
    ClientDisconnect disconnect = ClientDisconnect.create();
    AtomicReference<GatewayResponse> answer = new AtomicReference<>();
    AtomicReference<Boolean> interruptedAfter = new AtomicReference<>();
    Thread requestThread = Thread.ofVirtual().start(() -> {
      answer.set(Blocking.await(router.handle(requestWith(disconnect, false))));
      interruptedAfter.set(Thread.currentThread().isInterrupted());
    });
    assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();

    disconnect.signal();

    assertThat(requestThread.join(java.time.Duration.ofSeconds(5))).isTrue();
    assertThat(answer.get().status()).isEqualTo(ErrorKind.CLIENT_CLOSED.status());
    assertThat(cloudCalls).hasValue(0);
    assertThat(localCalls).as("not sent local instead").hasValue(0);
    assertThat(interruptedAfter.get()).as("the interrupt only ended the wait").isFalse();
  }

  @Test
  void aSuccessfulAnswerIsKeptEvenIfTheClientLeftMeanwhile() {
    ClientDisconnect disconnect = ClientDisconnect.create();
    Router router = router(backend(BackendKind.CLOUD, request -> {
      disconnect.signal();
      return RouterTest.ok();
    }), AdmissionGate.OPEN);

    GatewayResponse answer = Blocking.await(router.handle(requestWith(disconnect, false)));

    assertThat(answer.status()).as("its usage is real and is settled as usual").isEqualTo(200);
  }

  static Backend backend(BackendKind kind, Function<GatewayRequest, GatewayResponse> answer) {
    return RouterTest.backend(kind, answer);
  }
}
