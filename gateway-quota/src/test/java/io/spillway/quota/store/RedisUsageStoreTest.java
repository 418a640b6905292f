package io.spillway.quota.store;

import io.spillway.redis.RedisLink;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisUsageStoreTest {
  private static final Duration HOLD_TIMEOUT = Duration.ofMinutes(40);
  private static final PoolKey BRONZE = new PoolKey("2026-11", Tier.BRONZE);

  @TempDir Path dir;
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final List<AutoCloseable> resources = new ArrayList<>();
  private RedisServer redis;

  @BeforeEach
  void startRedis() {
    redis = RedisServer.start(dir.resolve("redis"));
  }

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable resource : resources.reversed()) {
      resource.close();
    }
    redis.close();
  }

  private RedisUsageStore replica(boolean failClosed) {
    RedisLink link = RedisLink.open(redis.uri(), Duration.ofSeconds(2));
    resources.add(link);
    RedisUsageStore store = new RedisUsageStore(link, Duration.ofSeconds(2), Duration.ofMillis(50),
        HOLD_TIMEOUT, failClosed, clock);
    resources.add(store);
    return store;
  }

  private static void use(UsageStore store, PoolKey pool, String team, long tokens) {
    ReserveOutcome outcome = store.reserve(pool, team, tokens, Long.MAX_VALUE);
    assertThat(outcome.admitted()).isTrue();
    store.settle(outcome.hold(), tokens);
  }

  @Test
  void replicasShareOnePoolAndItsTeamUsage() {
    RedisUsageStore a = replica(false);
    RedisUsageStore b = replica(false);

    use(a, BRONZE, "sandbox", 600);
    ReserveOutcome held = b.reserve(BRONZE, "scripts", 400, 1000);

    assertThat(held.admitted()).isTrue();
    assertThat(a.reserve(BRONZE, "sandbox", 1, 1000).admitted()).isFalse();
    b.settle(held.hold(), 150);
    assertThat(a.usage(BRONZE)).isEqualTo(new PoolUsage(750, 0));
    assertThat(a.teamUsage("2026-11")).containsEntry("sandbox", 600L).containsEntry("scripts", 150L);
    assertThat(a.claimAlert(BRONZE, "alert")).isTrue();
    assertThat(b.claimAlert(BRONZE, "alert")).isFalse();
  }

  @Test
  void aRedisRestartMidTestLosesNoSettledUsage() {
    RedisUsageStore store = replica(false);
    use(store, BRONZE, "sandbox", 500);

    redis.stop();
    use(store, BRONZE, "sandbox", 70); // Redis is away: counted locally, queued for write-back
    assertThat(store.status().healthy()).isFalse();
    assertThat(store.status().pendingSettlements()).isGreaterThanOrEqualTo(1);
    assertThat(store.usage(BRONZE).used()).isEqualTo(570);

    redis.restart();
    await("write-back after Redis returns").atMost(Duration.ofSeconds(20))
        .until(() -> store.status().healthy() && store.status().pendingSettlements() == 0);
    use(store, BRONZE, "sandbox", 30);

    RedisUsageStore fresh = replica(false);
    assertThat(fresh.usage(BRONZE)).isEqualTo(new PoolUsage(600, 0));
    assertThat(fresh.teamUsage("2026-11")).containsEntry("sandbox", 600L);
    assertThat(store.usage(BRONZE)).isEqualTo(new PoolUsage(600, 0));
  }

  @Test
  void replicasAddSpendToOneTotalPerTeamAndTierAndClaimEachSpendBandOnce() {
    RedisUsageStore a = replica(false);
    RedisUsageStore b = replica(false);

    a.addSpend("2026-11", "web", Tier.SILVER, 30_000_000, false);
    b.addSpend("2026-11", "web", Tier.SILVER, 20_000_000, false);
    b.addSpend("2026-11", "web", Tier.GOLD, 5, false);
    a.addSpend("2026-11", "sandbox", Tier.BRONZE, 0, true);

    for (RedisUsageStore replica : List.of(a, b)) {
      MonthSpend spend = replica.spend("2026-11");
      assertThat(spend.nanosByTeam().get("web")).containsEntry(Tier.SILVER, 50_000_000L).containsEntry(Tier.GOLD, 5L);
      assertThat(spend.team("web")).isEqualTo(50_000_005L);
      assertThat(spend.unpriced(Tier.BRONZE)).isEqualTo(1);
      assertThat(replica.teamSpend("2026-11", "web")).isEqualTo(50_000_005L);
      assertThat(replica.spend("2026-12").team("web")).isZero();
    }
    assertThat(a.claimSpendAlert("2026-11", "web", "alert")).isTrue();
    assertThat(b.claimSpendAlert("2026-11", "web", "alert")).isFalse();
    assertThat(b.claimSpendAlert("2026-11", "ci", "alert")).isTrue();
  }

  @Test
  void spendAddedWhileRedisIsAwayCountsLocallyAndIsWrittenBackOnce() {
    RedisUsageStore store = replica(false);
    store.addSpend("2026-11", "ci", Tier.BRONZE, 1_000, false);

    redis.stop();
    store.addSpend("2026-11", "ci", Tier.BRONZE, 250, true);
    assertThat(store.status().healthy()).isFalse();
    assertThat(store.status().pendingSettlements()).isEqualTo(1);
    assertThat(store.teamSpend("2026-11", "ci")).as("last known plus local").isEqualTo(1_250);

    redis.restart();
    await("write-back after Redis returns").atMost(Duration.ofSeconds(20))
        .until(() -> store.status().healthy() && store.status().pendingSettlements() == 0);

    RedisUsageStore fresh = replica(false);
    assertThat(fresh.teamSpend("2026-11", "ci")).isEqualTo(1_250);
    assertThat(fresh.spend("2026-11").unpriced(Tier.BRONZE)).isEqualTo(1);
    assertThat(store.teamSpend("2026-11", "ci")).as("no double count after write-back").isEqualTo(1_250);
  }

  @Test
  void whileRedisIsAwayLocalAccountingStillHonoursTheCeiling() {
    RedisUsageStore store = replica(false);
    use(store, BRONZE, "sandbox", 900);
    redis.stop();

    ReserveOutcome fits = store.reserve(BRONZE, "sandbox", 100, 1000);
    ReserveOutcome over = store.reserve(BRONZE, "sandbox", 1, 1000);

    assertThat(fits.admitted()).isTrue();
    assertThat(over.admitted()).isFalse();
    store.settle(fits.hold(), 80);
    assertThat(store.usage(BRONZE).used()).isEqualTo(980);
  }

  @Test
  void aHoldTakenWhileRedisWasAwayIsSettledIntoRedisOnceItReturns() {
    RedisUsageStore store = replica(false);
    redis.stop();
    ReserveOutcome localHold = store.reserve(BRONZE, "sandbox", 100, 1000);
    assertThat(localHold.admitted()).isTrue();

    redis.restart();
    await().atMost(Duration.ofSeconds(20)).until(() -> store.status().healthy());
    // The local hold still counts against the pool on the shared path until it settles.
    assertThat(store.reserve(BRONZE, "sandbox", 901, 1000).admitted()).isFalse();
    store.settle(localHold.hold(), 40);

    assertThat(replica(false).usage(BRONZE)).isEqualTo(new PoolUsage(40, 0));
    assertThat(store.usage(BRONZE)).isEqualTo(new PoolUsage(40, 0));
  }

  @Test
  void failClosedRefusesWhileRedisIsAwayAndRecoversWhenItReturns() {
    RedisUsageStore store = replica(true);
    use(store, BRONZE, "sandbox", 10);
    redis.stop();

    assertThatThrownBy(() -> store.reserve(BRONZE, "sandbox", 1, 1000))
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("quota.failClosed");

    redis.restart();
    await().atMost(Duration.ofSeconds(20)).until(() -> store.status().healthy());
    assertThat(store.reserve(BRONZE, "sandbox", 1, 1000).admitted()).isTrue();
  }

  @Test
  void holdsOfAReplicaThatDiedExpireAfterTheHoldTimeout() {
    RedisUsageStore dead = replica(false);
    RedisUsageStore alive = replica(false);
    assertThat(dead.reserve(BRONZE, "sandbox", 1000, 1000).admitted()).isTrue();
    // The replica dies here: its hold is never settled.

    assertThat(alive.reserve(BRONZE, "sandbox", 1, 1000).admitted()).isFalse();
    clock.advance(HOLD_TIMEOUT.plusSeconds(1));

    ReserveOutcome after = alive.reserve(BRONZE, "sandbox", 1000, 1000);
    assertThat(after.admitted()).isTrue();
    assertThat(after.usage()).isEqualTo(new PoolUsage(0, 1000));
  }

  @Test
  void aSettlementReplayedAfterAnAmbiguousFailureCountsOnce() {
    RedisUsageStore store = replica(false);
    ReserveOutcome outcome = store.reserve(BRONZE, "sandbox", 100, 1000);

    store.settle(outcome.hold(), 60);
    store.settle(outcome.hold(), 60);

    assertThat(store.usage(BRONZE)).isEqualTo(new PoolUsage(60, 0));
  }

  @Test
  void startsWhileRedisIsDownAndConnectsWhenItComesUp() {
    redis.stop();
    RedisUsageStore store = replica(false);
    assertThat(store.status().healthy()).isFalse();
    use(store, BRONZE, "sandbox", 25);

    redis.restart();
    await().atMost(Duration.ofSeconds(20))
        .until(() -> store.status().healthy() && store.status().pendingSettlements() == 0);

    assertThat(replica(false).usage(BRONZE).used()).isEqualTo(25);
  }
}
