package io.spillway.routing.risk;

import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import java.util.ArrayList;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.redis.RedisLink;
import io.spillway.core.fleet.FleetMode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.FailoverConfig;
import io.spillway.config.ShapingConfig;
import io.spillway.core.json.Json;
import io.spillway.core.risk.ReplicaRiskCounts;
import io.spillway.core.risk.RiskCounts;
import io.spillway.shaping.risk.RiskIndex;
import io.spillway.core.testing.FakeClock;
import io.spillway.redis.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Three replicas' risk counts over one real Redis: each replica's index sees every replica's
 * requests; with Redis gone each counts its own, and what it counted meanwhile reaches the fleet
 * when Redis is back. What travels between replicas is awaited, never timed.
 */
class FleetRiskCountsTest {
  /** A second, not the 200 ms default: on a loaded machine an ordinary sync may take longer than that. */
  static final Duration TIMEOUT = Duration.ofSeconds(1);
  /**
   * How long a change may take to reach every replica before the test fails. Generous: the awaits
   * return as soon as it arrives, so only what never arrives fails, not what a loaded machine delays.
   */
  static final Duration EVENTUALLY = Duration.ofSeconds(20);

  final BreakerSettings failover = BreakerSettings.from(new FailoverConfig(3, Duration.ofMinutes(5), Duration.ofHours(1), true, 20,
      TIMEOUT, Duration.ofMillis(250), Duration.ofMinutes(3)));
  final ShapingConfig.RiskConfig risk = ShapingConfig.RiskConfig.DEFAULTS;
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  RedisServer redis;
  FleetRiskCounts a;
  FleetRiskCounts b;
  FleetRiskCounts c;
  final List<RedisLink> links = new ArrayList<>();

  @BeforeEach
  void startThreeReplicas() {
    redis = RedisServer.start();
    a = FleetRiskCounts.connect(link(), risk, failover, clock);
    b = FleetRiskCounts.connect(link(), risk, failover, clock);
    c = FleetRiskCounts.connect(link(), risk, failover, clock);
    await("every replica counts with the fleet").atMost(Duration.ofSeconds(5))
        .untilAsserted(() -> assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.FLEET));
  }

  @AfterEach
  void stop() {
    for (FleetRiskCounts counts : new FleetRiskCounts[] {a, b, c}) {
      if (counts != null) {
        counts.close();
      }
    }
    links.forEach(RedisLink::close);
    if (redis != null) {
      redis.close();
    }
  }

  /** Each replica is a process of its own: its own link to Redis. */
  RedisLink link() {
    RedisLink link = RedisLink.open(redis.uri(), TIMEOUT);
    links.add(link);
    return link;
  }

  void answered(RiskCounts counts, int requests, long latencyMillis, int errors) {
    for (int i = 0; i < requests; i++) {
      counts.answered(clock.millis(), latencyMillis, i < errors);
    }
  }

  @Test
  void everyReplicaCountsTheRequestsOfAllThree() {
    answered(a, 10, 1000, 2);
    answered(b, 5, 400, 0);
    c.refused(clock.millis());
    c.refused(clock.millis());
    c.refused(clock.millis());

    await("each replica sees the fleet's requests").atMost(EVENTUALLY).untilAsserted(() -> {
      for (FleetRiskCounts replica : List.of(a, b, c)) {
        RiskCounts.Totals totals = replica.totals(clock.millis());
        assertThat(totals.lastWindow()).as("answered and refused, every replica").isEqualTo(18);
        assertThat(totals.recent()).isEqualTo(15);
        assertThat(totals.recentErrors()).isEqualTo(2);
        assertThat(totals.recentLatencyMillis()).isEqualTo(10 * 1000 + 5 * 400);
      }
    });
    assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.FLEET);
  }

  @Test
  void errorsSeenByOneReplicaRaiseTheIndexOnAnother() {
    RiskIndex onB = new RiskIndex(risk, clock, b);
    answered(a, risk.minSamples(), risk.latencyBaseline().toMillis(), risk.minSamples());

    await("b's index counts a's errors").atMost(EVENTUALLY).untilAsserted(() ->
        assertThat(onB.snapshot().at("/components/errors").asDouble()).isEqualTo(1.0));
    assertThat(onB.snapshot().at("/counts/mode").asText()).isEqualTo("fleet");
    RiskIndex ownOnly = new RiskIndex(risk, clock);
    assertThat(ownOnly.value()).as("without the fleet, b saw nothing").isZero();
  }

  @Test
  void withRedisGoneEachReplicaCountsItsOwnAndWritesThemBackWhenRedisReturns() {
    answered(a, 4, 500, 0);
    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(b.totals(clock.millis()).recent()).isEqualTo(4));

    redis.kill();
    await("each replica falls back to its own counts").atMost(TIMEOUT.plusSeconds(1))
        .untilAsserted(() -> assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.REPLICA_FALLBACK));
    answered(a, 3, 500, 3);
    answered(b, 2, 500, 0);

    assertThat(a.totals(clock.millis()).recent()).as("a's own: 4 before, 3 during").isEqualTo(7);
    assertThat(b.totals(clock.millis()).recent()).as("b's own: 2 during").isEqualTo(2);
    ObjectNode described = Json.object();
    a.describe(described);
    assertThat(described.get("mode").asText()).isEqualTo("local-fallback");
    assertThat(described.at("/fleet/reachable").asBoolean()).isFalse();

    redis.startAgain();
    await("every replica is back on the fleet's counts").atMost(Duration.ofSeconds(3))
        .untilAsserted(() -> assertThat(List.of(a.mode(), b.mode(), c.mode())).containsOnly(FleetMode.FLEET));
    await("what was counted during the outage reached the fleet (the restarted Redis kept nothing older)")
        .atMost(EVENTUALLY).untilAsserted(() -> {
          RiskCounts.Totals totals = c.totals(clock.millis());
          assertThat(totals.recent()).isEqualTo(5);
          assertThat(totals.recentErrors()).isEqualTo(3);
        });
  }

  @Test
  void noRequestWaitsOnAHungRedis() {
    redis.freeze();
    try {
      // Redis answers nobody until it is thawed below: requests that finish at all never waited on it
      // (the generous bound only turns a hang into a failure; no tight wall-clock bound).
      assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
        for (int i = 0; i < 1000; i++) {
          a.answered(clock.millis(), 100, false);
          a.totals(clock.millis());
        }
      });
      await("the sync gives up after the timeout").atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(a.mode()).isEqualTo(FleetMode.REPLICA_FALLBACK));
      assertThat(a.totals(clock.millis()).recent()).isEqualTo(1000);
    } finally {
      redis.thaw();
    }
    await("back on the fleet's counts once Redis answers").atMost(Duration.ofSeconds(8))
        .untilAsserted(() -> assertThat(a.mode()).isEqualTo(FleetMode.FLEET));
  }

  @Test
  void withoutRedisEachReplicaCountsItsOwn() {
    RiskCounts own = RiskCountSources.open(null, risk, failover, clock);
    assertThat(own).isInstanceOf(ReplicaRiskCounts.class);
    assertThat(own.mode()).isEqualTo(FleetMode.REPLICA);
    RiskIndex index = new RiskIndex(risk, clock, own).bindTo(new SimpleMeterRegistry());
    assertThat(index.snapshot().at("/counts/mode").asText()).isEqualTo("local");
  }
}
