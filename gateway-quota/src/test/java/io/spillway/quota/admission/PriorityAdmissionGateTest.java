package io.spillway.quota.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The waiting area with real virtual threads and a concurrency limit of one: whoever holds the one
 * place decides when the next waiter goes, so the order is deterministic without any sleep.
 */
class PriorityAdmissionGateTest {
  private static final Map<Tier, Duration> MAX_WAIT = Map.of(
      Tier.GOLD, Duration.ofSeconds(30), Tier.SILVER, Duration.ofSeconds(10), Tier.BRONZE, Duration.ofSeconds(5));

  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private final ConcurrentLinkedQueue<String> admitted = new ConcurrentLinkedQueue<>();
  private final List<Thread> threads = new ArrayList<>();
  private PriorityAdmissionGate gate;

  private PriorityAdmissionGate gate(int concurrency, int queueSize) {
    gate = new PriorityAdmissionGate(Map.of(BackendKind.CLOUD, concurrency), queueSize, MAX_WAIT, clock, clock, meters);
    return gate;
  }

  @AfterEach
  void allThreadsFinished() {
    await().atMost(Duration.ofSeconds(10)).until(() -> threads.stream().noneMatch(Thread::isAlive));
  }

  @Test
  void waitingAreaServesGoldFirstUnderContention() {
    gate(1, 10);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.BRONZE, false));

    queue("bronze", request(Tier.BRONZE, false));
    queue("silver", request(Tier.SILVER, false));
    queue("gold", request(Tier.GOLD, false));
    holder.close();

    await().until(() -> admitted.size() == 3);
    assertThat(admitted).containsExactly("gold", "silver", "bronze");
  }

  @Test
  void requestsOfOneTierAreServedFirstComeFirstServed() {
    gate(1, 10);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.SILVER, false));

    for (int i = 1; i <= 4; i++) {
      queue("silver-" + i, request(Tier.SILVER, false));
    }
    holder.close();

    await().until(() -> admitted.size() == 4);
    assertThat(admitted).containsExactly("silver-1", "silver-2", "silver-3", "silver-4");
  }

  @Test
  void lowSignalRequestsGoLastWhateverTheirTier() {
    gate(1, 10);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.GOLD, false));

    queue("gold-low-signal", request(Tier.GOLD, true));
    queue("bronze", request(Tier.BRONZE, false));
    queue("silver", request(Tier.SILVER, false));
    holder.close();

    await().until(() -> admitted.size() == 3);
    assertThat(admitted).containsExactly("silver", "bronze", "gold-low-signal");
  }

  @Test
  void requestWaitingPastItsTiersMaxWaitGets429QueueTimeoutWithRetryAfter() {
    gate(1, 10);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.GOLD, false));
    AtomicReference<RuntimeException> bronzeFailure = queue("bronze", request(Tier.BRONZE, false));
    AtomicReference<RuntimeException> goldFailure = queue("gold", request(Tier.GOLD, false));

    clock.advance(Duration.ofSeconds(5));
    assertThat(gate.wakeOverdue()).as("only bronze's 5s maxWait has passed").isEqualTo(1);

    await().until(() -> bronzeFailure.get() != null);
    GatewayException timeout = (GatewayException) bronzeFailure.get();
    assertThat(timeout.kind()).isEqualTo(ErrorKind.QUEUE_TIMEOUT);
    GatewayResponse answer = ErrorMapper.toResponse(timeout);
    assertThat(answer.status()).isEqualTo(429);
    assertThat(Long.parseLong(answer.headers().get("retry-after"))).isBetween(1L, 5L);
    assertThat(timeout.toError().code()).isEqualTo("queue_timeout");
    assertThat(meters.get("spillway.admission.rejected").tags("tier", "bronze", "reason", "queue_timeout")
        .counter().count()).isEqualTo(1.0);

    holder.close();
    await().until(() -> admitted.contains("gold"));
    assertThat(goldFailure.get()).isNull();
  }

  @Test
  void fullWaitingAreaRefusesAtOnceWith503AndRetryAfter() {
    gate(1, 1);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.SILVER, false));
    queue("silver-waiting", request(Tier.SILVER, false));

    assertThatThrownBy(() -> gate.enter(BackendKind.CLOUD, request(Tier.SILVER, false)))
        .isInstanceOfSatisfying(GatewayException.class, e -> {
          assertThat(e.kind()).isEqualTo(ErrorKind.UNAVAILABLE);
          assertThat(e.code()).isEqualTo("queue_full");
          GatewayResponse answer = ErrorMapper.toResponse(e);
          assertThat(answer.status()).isEqualTo(503);
          assertThat(answer.headers().get("retry-after")).isNotNull();
        });
    assertThat(meters.get("spillway.admission.rejected").tags("tier", "silver", "reason", "queue_full")
        .counter().count()).isEqualTo(1.0);

    holder.close();
    await().until(() -> admitted.contains("silver-waiting"));
  }

  @Test
  void goldArrivingAtAFullWaitingAreaTakesTheLatestLowerWaitersPlace() {
    gate(1, 2);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.SILVER, false));
    AtomicReference<RuntimeException> firstBronze = queue("bronze-1", request(Tier.BRONZE, false));
    AtomicReference<RuntimeException> secondBronze = queue("bronze-2", request(Tier.BRONZE, false));

    queueWithoutWaiting("gold", request(Tier.GOLD, false));
    await().until(() -> secondBronze.get() != null);
    assertThat(((GatewayException) secondBronze.get()).status()).isEqualTo(503);
    await().until(() -> gate.waiting(BackendKind.CLOUD) == 2);

    holder.close();
    await().until(() -> admitted.size() == 2);
    assertThat(admitted).containsExactly("gold", "bronze-1");
    assertThat(firstBronze.get()).isNull();
  }

  @Test
  void requestWithinTheLimitPassesWithoutWaiting() {
    gate(2, 0);
    AdmissionGate.Permit first = gate.enter(BackendKind.CLOUD, request(Tier.BRONZE, false));
    AdmissionGate.Permit second = gate.enter(BackendKind.CLOUD, request(Tier.BRONZE, false));

    assertThat(gate.snapshot().get("cloud").get("inFlight").asInt()).isEqualTo(2);
    assertThatThrownBy(() -> gate.enter(BackendKind.CLOUD, request(Tier.GOLD, false)))
        .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.status()).isEqualTo(503));
    first.close();
    second.close();
    assertThat(gate.snapshot().get("cloud").get("inFlight").asInt()).isZero();
  }

  @Test
  void closingAPermitTwiceGivesBackOnePlace() {
    gate(1, 10);
    AdmissionGate.Permit permit = gate.enter(BackendKind.CLOUD, request(Tier.GOLD, false));
    permit.close();
    permit.close();

    AdmissionGate.Permit next = gate.enter(BackendKind.CLOUD, request(Tier.GOLD, false));
    assertThat(gate.snapshot().get("cloud").get("inFlight").asInt()).isEqualTo(1);
    queue("waits", request(Tier.GOLD, false));
    next.close();
    await().until(() -> admitted.contains("waits"));
  }

  @Test
  void snapshotAndGaugesShowWaitersByTier() {
    gate(1, 10);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.GOLD, false));
    queue("silver", request(Tier.SILVER, false));
    queue("low", request(Tier.BRONZE, true));

    var cloud = gate.snapshot().get("cloud");
    assertThat(cloud.get("limit").asInt()).isEqualTo(1);
    assertThat(cloud.get("inFlight").asInt()).isEqualTo(1);
    assertThat(cloud.get("queueSize").asInt()).isEqualTo(10);
    assertThat(Json.toString(cloud.get("waiting")))
        .isEqualTo("{\"gold\":0,\"silver\":1,\"bronze\":0,\"low_signal\":1}");
    assertThat(meters.get("spillway.admission.waiting").tags("backend", "cloud", "tier", "silver").gauge().value())
        .isEqualTo(1.0);
    assertThat(meters.get("spillway.admission.in_flight").tags("backend", "cloud").gauge().value()).isEqualTo(1.0);

    clock.advance(Duration.ofMillis(700));
    holder.close();
    await().until(() -> admitted.size() == 2);
    var silverWait = meters.get("spillway.admission.wait").tags("tier", "silver").timer();
    assertThat(silverWait.count()).isEqualTo(1);
    assertThat(silverWait.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(700.0);
  }

  @Test
  void eachBackendHasItsOwnLimit() {
    gate = new PriorityAdmissionGate(Map.of(BackendKind.CLOUD, 1, BackendKind.LOCAL, 1), 0, MAX_WAIT, clock, clock, meters);
    AdmissionGate.Permit cloud = gate.enter(BackendKind.CLOUD, request(Tier.GOLD, false));
    AdmissionGate.Permit local = gate.enter(BackendKind.LOCAL, request(Tier.GOLD, false));

    assertThat(gate.snapshot().get("local").get("inFlight").asInt()).isEqualTo(1);
    cloud.close();
    local.close();
    assertThatThrownBy(() -> gate.enter(BackendKind.CACHE, request(Tier.GOLD, false)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void tryEnterTakesAFreePlaceAtOnceForEveryTier() {
    for (Tier tier : Tier.values()) {
      gate(1, 10);

      AdmissionGate.Permit permit = gate.tryEnter(BackendKind.CLOUD, request(tier, false));

      assertThat(permit).as(tier.tag()).isNotNull();
      assertThat(gate.snapshot().path("cloud").path("inFlight").asInt()).isEqualTo(1);
      permit.close();
      assertThat(gate.snapshot().path("cloud").path("inFlight").asInt()).isZero();
    }
  }

  @Test
  void tryEnterDoesNotWaitWhenTheLimitIsReachedWhateverTheTier() {
    gate(1, 10);
    AdmissionGate.Permit holder = gate.tryEnter(BackendKind.CLOUD, request(Tier.BRONZE, false));

    for (Tier tier : Tier.values()) {
      assertThat(gate.tryEnter(BackendKind.CLOUD, request(tier, false))).as(tier.tag()).isNull();
    }
    assertThat(gate.waiting(BackendKind.CLOUD)).as("asking did not queue anybody").isZero();
    holder.close();
  }

  @Test
  void tryEnterNeverPassesTheWaitingAreaEvenForGold() {
    gate(1, 10);
    AdmissionGate.Permit holder = gate.enter(BackendKind.CLOUD, request(Tier.BRONZE, false));
    queue("silver", request(Tier.SILVER, false));

    assertThat(gate.tryEnter(BackendKind.CLOUD, request(Tier.GOLD, false))).isNull();
    assertThat(gate.waiting(BackendKind.CLOUD)).as("only the silver request waits").isEqualTo(1);

    holder.close();
    await().until(() -> admitted.contains("silver"));
    AdmissionGate.Permit gold = gate.tryEnter(BackendKind.CLOUD, request(Tier.GOLD, false));
    assertThat(gold).as("nobody waits any more").isNotNull();
    gold.close();
  }

  @Test
  void tryEnterKnowsOnlyTheBackendsItWasBuiltWith() {
    gate(1, 10);

    assertThatThrownBy(() -> gate.tryEnter(BackendKind.CACHE, request(Tier.GOLD, false)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /** Starts a request that enters the gate, records its admission and leaves; returns once it waits. */
  private AtomicReference<RuntimeException> queue(String name, GatewayRequest request) {
    int before = gate.waiting(BackendKind.CLOUD);
    AtomicReference<RuntimeException> failure = queueWithoutWaiting(name, request);
    await().until(() -> gate.waiting(BackendKind.CLOUD) == before + 1 || failure.get() != null);
    return failure;
  }

  private AtomicReference<RuntimeException> queueWithoutWaiting(String name, GatewayRequest request) {
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    threads.add(Thread.ofVirtual().name(name).start(() -> {
      try (AdmissionGate.Permit ignored = gate.enter(BackendKind.CLOUD, request)) {
        admitted.add(name);
      } catch (RuntimeException e) {
        failure.set(e);
      }
    }));
    return failure;
  }

  private static GatewayRequest request(Tier tier, boolean lowSignal) {
    GatewayRequest request = GatewayRequest.create("req", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object(), null,
        java.time.Instant.parse("2026-11-10T10:00:00Z"));
    request.setAttribute(RequestAttributes.CALLER, new Caller(tier.tag() + "-team", tier, "key"));
    if (lowSignal) {
      request.setAttribute(RequestAttributes.LOW_SIGNAL, true);
    }
    return request;
  }
}
