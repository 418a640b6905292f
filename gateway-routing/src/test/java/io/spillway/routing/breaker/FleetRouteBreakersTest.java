package io.spillway.routing.breaker;

import io.spillway.redis.RedisLink;
import io.spillway.core.fleet.FleetMode;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * With several cloud routes each route has its own fleet breaker in one real Redis: two replicas,
 * two routes each. A route's state is shared by the replicas and kept apart from the other route's.
 */
class FleetRouteBreakersTest {
  /**
   * How long a change may take to reach the other replica before the test fails. Generous: the
   * awaits return as soon as it arrives, so only what never arrives fails.
   */
  static final Duration EVENTUALLY = Duration.ofSeconds(20);

  final BreakerSettings config = BreakerSettings.from(new FailoverConfig(3, Duration.ofMinutes(5), Duration.ofHours(1), true, 20,
      Duration.ofMillis(200), Duration.ofMillis(250), Duration.ofMinutes(2)));
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final List<Breaker> breakers = new ArrayList<>();
  RedisServer redis;
  final List<RedisLink> links = new ArrayList<>();

  @BeforeEach
  void startRedis() {
    redis = RedisServer.start();
  }

  @AfterEach
  void stop() {
    breakers.forEach(Breaker::close);
    links.forEach(RedisLink::close);
    if (redis != null) {
      redis.close();
    }
  }

  Breaker replica(String route) {
    RedisLink link = RedisLink.open(redis.uri(), Duration.ofSeconds(1));
    links.add(link);
    Breaker breaker = Breakers.create(route, link, config, clock);
    breakers.add(breaker);
    return breaker;
  }

  /** On a loaded machine a replica may start in local-fallback; these tests are about the fleet's state. */
  void allFollowTheFleet() {
    await("every breaker follows Redis").atMost(Duration.ofSeconds(10))
        .until(() -> breakers.stream().allMatch(b -> b.mode() == FleetMode.FLEET));
  }

  static void capacity(Breaker breaker) {
    Ticket ticket = breaker.acquire();
    assertThat(ticket.target()).isNotEqualTo(Target.LOCAL);
    breaker.record(ticket, new Verdict(Outcome.CAPACITY, "at_capacity_message", null));
  }

  @Test
  void aRouteOpensForTheWholeFleetWhileTheOtherRouteStaysClosed() {
    Breaker primaryA = replica("cloud");
    Breaker azureA = replica("azure-eu");
    Breaker primaryB = replica("cloud");
    Breaker azureB = replica("azure-eu");
    allFollowTheFleet();
    assertThat(azureA).isInstanceOf(FleetBreaker.class);
    assertThat(azureA.route()).isEqualTo("azure-eu");

    capacity(azureA);
    capacity(azureB);
    capacity(azureA);

    await("both replicas see azure-eu open").atMost(EVENTUALLY)
        .untilAsserted(() -> assertThat(List.of(azureA.state(), azureB.state())).containsOnly(State.OPEN));
    assertThat(List.of(primaryA.state(), primaryB.state())).containsOnly(State.CLOSED);
    assertThat(primaryA.streak()).isZero();
    assertThat(azureB.status().toJson().get("route").asText()).isEqualTo("azure-eu");
  }

  @Test
  void eachRouteKeepsItsStateUnderItsOwnKeysAndTheDefaultRouteUnderTheOriginalOnes() {
    Breaker primary = replica("cloud");
    Breaker azure = replica("azure-eu");
    Breaker azureOnB = replica("azure-eu");
    allFollowTheFleet();

    azure.override(OverrideMode.OPEN);
    primary.override(OverrideMode.CLOSED);

    await().atMost(EVENTUALLY).untilAsserted(() -> assertThat(azureOnB.state()).isEqualTo(State.FORCED_OPEN));
    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      assertThat(c.sync().hget("{spillway:breaker}:state", "state")).isEqualTo("forced_closed");
      assertThat(c.sync().hget("{spillway:breaker:azure-eu}:state", "state")).isEqualTo("forced_open");
      assertThat(c.sync().exists("{spillway:breaker:azure-eu}:history")).isEqualTo(1);
    } finally {
      client.shutdown();
    }
  }
}
