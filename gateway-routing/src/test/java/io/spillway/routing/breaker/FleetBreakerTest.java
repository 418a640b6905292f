package io.spillway.routing.breaker;

import io.spillway.redis.RedisLink;
import io.spillway.core.fleet.FleetMode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.config.FailoverConfig;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.breaker.Breaker.OverrideMode;
import io.spillway.routing.breaker.Breaker.State;
import io.spillway.routing.breaker.Breaker.Target;
import io.spillway.routing.breaker.Breaker.Ticket;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import io.spillway.redis.testing.RedisServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three replicas' breakers over one real Redis: one streak, one state, one probe, one override; and
 * each replica on its own while Redis is gone. Time windows run on one fake clock; what travels
 * between replicas (pub/sub, the periodic re-read) and what Redis's own timeout ends is awaited
 * (Awaitility returns as soon as it holds), never timed: on a loaded machine it may take longer,
 * and only what never happens fails.
 */
class FleetBreakerTest {
  static final Duration LOCAL_FOR = Duration.ofMinutes(5);
  static final Duration PROBE_LEASE = Duration.ofMinutes(2);
  /** A second, not the 200 ms default: on a loaded machine an ordinary step may take longer than that. */
  static final Duration TIMEOUT = Duration.ofSeconds(1);
  /**
   * How long a change may take to reach every replica, or a replica to notice Redis leave or return,
   * before the test fails. Generous: the awaits return as soon as it arrives, so a fast machine waits
   * no longer, and a loaded one does not fail a test over what arrived late.
   */
  static final Duration EVENTUALLY = Duration.ofSeconds(20);

  final BreakerSettings config = BreakerSettings.from(new FailoverConfig(3, LOCAL_FOR, Duration.ofHours(1), true, 20, TIMEOUT, Duration.ofMillis(250), PROBE_LEASE));
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final List<TransitionLog> logs = new ArrayList<>();
  final List<RedisLink> links = new ArrayList<>();
  RedisServer redis;
  FleetBreaker a;
  FleetBreaker b;
  FleetBreaker c;

  @BeforeEach
  void startThreeReplicas() {
    redis = RedisServer.start();
    a = replica();
    b = replica();
    c = replica();
    await("every replica follows the fleet").atMost(EVENTUALLY)
        .untilAsserted(() -> assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.FLEET));
  }

  @AfterEach
  void stop() {
    for (FleetBreaker breaker : new FleetBreaker[] {a, b, c}) {
      if (breaker != null) {
        breaker.close();
      }
    }
    links.forEach(RedisLink::close);
    if (redis != null) {
      redis.close();
    }
  }

  FleetBreaker replica() {
    // Each replica is a process of its own: its own link to Redis.
    RedisLink link = RedisLink.open(redis.uri(), TIMEOUT);
    links.add(link);
    FleetBreaker replica = FleetBreaker.connect(link, config, clock);
    logs.add(TransitionLog.on(replica));
    return replica;
  }

  static Verdict verdict(Outcome outcome) {
    return new Verdict(outcome, outcome.tag(), null);
  }

  static void answer(Breaker replica, Outcome outcome) {
    Ticket ticket = replica.acquire();
    assertThat(ticket.target()).isNotEqualTo(Target.LOCAL);
    replica.record(ticket, verdict(outcome));
  }

  void allAre(State state) {
    await("every replica is " + state).atMost(EVENTUALLY).pollInterval(Duration.ofMillis(10))
        .untilAsserted(() -> assertThat(List.of(a.state(), b.state(), c.state())).containsOnly(state));
  }

  @Test
  void everyReplicaFollowsTheFleetsBreakerWhenRedisAnswers() {
    assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.FLEET);
    assertThat(a.status().toJson().get("mode").asText()).isEqualTo("fleet");
  }

  @Test
  void capacityAnswersSpreadOverThreeReplicasOpenTheBreakerOnAllWithinASecond() {
    answer(a, Outcome.CAPACITY);
    answer(b, Outcome.CAPACITY);
    assertThat(List.of(a.state(), b.state(), c.state())).containsOnly(State.CLOSED);
    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(c.streak()).isEqualTo(2));

    answer(c, Outcome.CAPACITY);

    allAre(State.OPEN);
    assertThat(a.acquire().target()).isEqualTo(Target.LOCAL);
    assertThat(b.status().toJson().get("history").get(0).get("reason").asText())
        .contains("3 capacity answers in a row across the fleet").contains("local for 5m");
    await("every replica counts the fleet's transition it saw, once").atMost(EVENTUALLY).untilAsserted(() ->
        assertThat(logs).allSatisfy(log -> assertThat(log.count(State.CLOSED, State.OPEN)).isEqualTo(1)));
  }

  @Test
  void withoutALocalBackendTheFleetsReasonForOpeningSaysRequestsStillGoToTheCloud() {
    RedisLink link = RedisLink.open(redis.uri(), TIMEOUT);
    links.add(link);
    FleetBreaker cloudOnly = FleetBreaker.connect(link, config.withLocalBackend(false), clock);
    try {
      for (int i = 0; i < 3; i++) {
        Ticket ticket = cloudOnly.acquire();
        cloudOnly.record(ticket, verdict(Outcome.CAPACITY));
      }
      assertThat(cloudOnly.state()).isEqualTo(State.OPEN);
      assertThat(cloudOnly.status().toJson().get("history").get(0).get("reason").asText())
          .contains("no local backend (local.enabled: false), so requests still go to the cloud")
          .contains("open for 5m").doesNotContain("local for");
    } finally {
      cloudOnly.close();
    }
  }

  @Test
  void aSuccessOnAnyReplicaStartsTheFleetsStreakAgain() {
    answer(a, Outcome.CAPACITY);
    answer(b, Outcome.CAPACITY);
    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(c.streak()).isEqualTo(2));

    answer(c, Outcome.SUCCESS);
    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(List.of(a.streak(), b.streak())).containsOnly(0));
    answer(a, Outcome.CAPACITY);

    assertThat(List.of(a.state(), b.state(), c.state())).containsOnly(State.CLOSED);
    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(b.streak()).isEqualTo(1));
  }

  @Test
  void rateLimitQuotaAndTransientAnswersNeverCountTowardTheFleetsStreak() {
    for (Outcome outcome : List.of(Outcome.RATE_LIMIT, Outcome.QUOTA, Outcome.TRANSIENT, Outcome.FINAL)) {
      answer(a, outcome);
      answer(b, outcome);
      answer(c, outcome);
    }
    assertThat(List.of(a.state(), b.state(), c.state())).containsOnly(State.CLOSED);
    assertThat(List.of(a.streak(), b.streak(), c.streak())).containsOnly(0);
  }

  void openTheFleet() {
    answer(a, Outcome.CAPACITY);
    answer(b, Outcome.CAPACITY);
    answer(c, Outcome.CAPACITY);
    allAre(State.OPEN);
  }

  @Test
  void halfOpenLetsExactlyOneProbeThroughAcrossTheFleet() throws Exception {
    openTheFleet();
    clock.advance(LOCAL_FOR);
    assertThat(List.of(a.state(), b.state(), c.state())).containsOnly(State.HALF_OPEN);

    List<Callable<Ticket>> asks = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    for (int i = 0; i < 60; i++) {
      Breaker replica = List.of(a, b, c).get(i % 3);
      asks.add(() -> {
        start.await();
        return replica.acquire();
      });
    }
    List<Ticket> tickets = new ArrayList<>();
    try (ExecutorService requests = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<Ticket>> futures = new ArrayList<>();
      for (Callable<Ticket> ask : asks) {
        futures.add(requests.submit(ask));
      }
      start.countDown();
      for (Future<Ticket> future : futures) {
        tickets.add(future.get());
      }
    }

    assertThat(tickets.stream().filter(t -> t.target() == Target.PROBE)).hasSize(1);
    assertThat(tickets.stream().filter(t -> t.target() == Target.LOCAL)).hasSize(59);
    await().atMost(EVENTUALLY).untilAsserted(() ->
        assertThat(List.of(a, b, c)).allSatisfy(r -> assertThat(r.status().toJson().get("probeInFlight").asBoolean()).isTrue()));
  }

  @Test
  void theProbesSuccessClosesTheBreakerOnEveryReplica() {
    openTheFleet();
    clock.advance(LOCAL_FOR);
    Ticket probe = b.acquire();
    assertThat(probe.target()).isEqualTo(Target.PROBE);
    assertThat(a.acquire().target()).isEqualTo(Target.LOCAL);

    b.record(probe, verdict(Outcome.SUCCESS));

    allAre(State.CLOSED);
    assertThat(c.acquire().target()).isEqualTo(Target.CLOUD);
  }

  @Test
  void theProbesCapacityAnswerOpensTheBreakerAgainOnEveryReplica() {
    openTheFleet();
    clock.advance(LOCAL_FOR);
    Ticket probe = c.acquire();
    assertThat(probe.target()).isEqualTo(Target.PROBE);

    c.record(probe, verdict(Outcome.CAPACITY));

    allAre(State.OPEN);
    assertThat(a.status().toJson().get("nextProbeAt").asText()).isEqualTo(clock.instant().plus(LOCAL_FOR).toString());
  }

  @Test
  void aProbeWhoseReplicaDiedIsHandedOnAfterItsLease() {
    openTheFleet();
    clock.advance(LOCAL_FOR);
    assertThat(a.acquire().target()).isEqualTo(Target.PROBE);
    a.close(); // the replica dies with the probe out: no answer, no release
    a = null;

    assertThat(b.acquire().target()).as("the lease still runs").isEqualTo(Target.LOCAL);
    clock.advance(PROBE_LEASE.minusSeconds(1));
    assertThat(c.acquire().target()).as("the lease still runs").isEqualTo(Target.LOCAL);
    clock.advance(Duration.ofSeconds(1));

    Ticket handedOn = c.acquire();
    assertThat(handedOn.target()).isEqualTo(Target.PROBE);
    assertThat(b.acquire().target()).isEqualTo(Target.LOCAL);
    c.record(handedOn, verdict(Outcome.SUCCESS));
    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(b.state()).isEqualTo(State.CLOSED));
  }

  @Test
  void aProbeGivenBackWithoutAnAnswerGoesToTheNextRequestOnAnyReplica() {
    openTheFleet();
    clock.advance(LOCAL_FOR);
    Ticket probe = a.acquire();
    assertThat(probe.target()).isEqualTo(Target.PROBE);

    a.release(probe);

    await("the next request on another replica, once it heard of the release, is the probe")
        .atMost(EVENTUALLY).pollInterval(Duration.ofMillis(10))
        .until(() -> b.acquire().target() == Target.PROBE);
  }

  @Test
  void aBreakerStateRedisLostIsFollowedFromItsNewBeginning() {
    openTheFleet();
    redis.flushAll();

    allAre(State.CLOSED);
    answer(b, Outcome.CAPACITY);
    answer(c, Outcome.CAPACITY);
    answer(a, Outcome.CAPACITY);
    allAre(State.OPEN);
  }

  @Test
  void anOverrideSetOnOneReplicaAppliesToAll() {
    a.override(OverrideMode.OPEN);

    allAre(State.FORCED_OPEN);
    Ticket ticket = c.acquire();
    assertThat(ticket.target()).isEqualTo(Target.LOCAL);
    assertThat(ticket.forcedLocal()).isTrue();
    assertThat(b.currentOverride()).isEqualTo(OverrideMode.OPEN);

    b.override(OverrideMode.CLOSED);
    allAre(State.FORCED_CLOSED);
    answer(a, Outcome.CAPACITY);
    answer(b, Outcome.CAPACITY);
    answer(c, Outcome.CAPACITY);
    assertThat(List.of(a.state(), b.state(), c.state())).as("forced closed counts nothing").containsOnly(State.FORCED_CLOSED);

    c.override(OverrideMode.AUTO);
    allAre(State.CLOSED);
  }

  @Test
  void leavingForcedOpenGoesThroughOneProbeForTheWholeFleet() {
    b.override(OverrideMode.OPEN);
    allAre(State.FORCED_OPEN);

    a.override(OverrideMode.AUTO);

    allAre(State.HALF_OPEN);
    assertThat(c.acquire().target()).isEqualTo(Target.PROBE);
    assertThat(a.acquire().target()).isEqualTo(Target.LOCAL);
  }

  @Test
  void withRedisKilledEveryReplicaFallsBackToItsOwnBreakerAndRejoinsWhenRedisReturns() {
    answer(a, Outcome.CAPACITY);
    answer(b, Outcome.CAPACITY);
    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(c.streak()).isEqualTo(2));

    redis.kill();
    answer(c, Outcome.CAPACITY);

    assertThat(c.mode()).isEqualTo(FleetMode.REPLICA_FALLBACK);
    assertThat(c.state()).as("the third answer counts on top of the last shared streak").isEqualTo(State.OPEN);
    await("the other replicas notice on their own").atMost(EVENTUALLY)
        .untilAsserted(() -> assertThat(List.of(a.mode(), b.mode())).containsOnly(FleetMode.REPLICA_FALLBACK));
    assertThat(a.state()).as("each decides alone now").isEqualTo(State.CLOSED);
    assertThat(a.acquire().target()).isEqualTo(Target.CLOUD);
    assertThat(c.acquire().target()).isEqualTo(Target.LOCAL);
    assertThat(c.status().toJson().get("mode").asText()).isEqualTo("local-fallback");
    assertThat(c.status().toJson().at("/fleet/reachable").asBoolean()).isFalse();

    redis.startAgain();

    await("every replica rejoins the fleet").atMost(EVENTUALLY)
        .untilAsserted(() -> assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.FLEET));
    assertThat(List.of(a.state(), b.state(), c.state())).as("Redis is the truth again (it came back empty)")
        .containsOnly(State.CLOSED);
    openTheFleet();
  }

  @Test
  void aRedisTooSlowToAnswerCountsAsGoneAfterTheTimeout() {
    redis.freeze();
    try {
      // Redis stays frozen until the answer is in: only the timeout can end the wait (nothing is
      // timed; a wait that never ends fails after EVENTUALLY instead of hanging the build).
      CompletableFuture<Void> answered = CompletableFuture.runAsync(() -> answer(a, Outcome.CAPACITY));
      await("Redis's timeout ends the wait").atMost(EVENTUALLY).until(answered::isDone);
      answered.join();

      assertThat(a.mode()).isEqualTo(FleetMode.REPLICA_FALLBACK);
      assertThat(a.streak()).as("the answer counts on this replica's own breaker").isEqualTo(1);
    } finally {
      redis.thaw();
    }
    await("the replica rejoins once Redis answers again").atMost(EVENTUALLY)
        .untilAsserted(() -> assertThat(a.mode()).isEqualTo(FleetMode.FLEET));
  }

  @Test
  void anOverrideWhileRedisIsGoneAppliesToThatReplicaOnly() {
    redis.kill();
    await().atMost(EVENTUALLY)
        .untilAsserted(() -> assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.REPLICA_FALLBACK));

    a.override(OverrideMode.OPEN);

    assertThat(a.state()).isEqualTo(State.FORCED_OPEN);
    assertThat(b.state()).isEqualTo(State.CLOSED);
  }

  @Test
  void withoutRedisEachReplicaHasItsOwnBreaker() {
    Breaker own = Breakers.create(null, config, clock);
    assertThat(own).isInstanceOf(ReplicaBreaker.class);
    assertThat(own.mode()).isEqualTo(FleetMode.REPLICA);
    assertThat(own.status().toJson().get("mode").asText()).isEqualTo("local");
    assertThat(Breakers.create("azure-eu", null, config, clock).mode()).isEqualTo(FleetMode.REPLICA);
  }
}
