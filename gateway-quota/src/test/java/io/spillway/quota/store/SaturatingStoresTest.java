package io.spillway.quota.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.redis.RedisLink;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Sums that would overflow saturate instead of wrapping negative, in every store (issue 25, finding 3),
 * and an error Redis answers with (not a connection problem) is not taken for an outage.
 */
class SaturatingStoresTest {
  static final PoolKey GOLD = new PoolKey("2026-11", Tier.GOLD);

  @TempDir Path dir;
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final List<AutoCloseable> resources = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable resource : resources.reversed()) {
      resource.close();
    }
  }

  <T extends AutoCloseable> T track(T resource) {
    resources.add(resource);
    return resource;
  }

  UsageStore open(String kind) {
    return switch (kind) {
      case "memory" -> track(new MemoryUsageStore());
      case "embedded" -> track(EmbeddedUsageStore.open(dir, Duration.ofMillis(50)));
      default -> redisStore(track(RedisServer.start()));
    };
  }

  RedisUsageStore redisStore(RedisServer redis) {
    RedisLink link = track(RedisLink.open(redis.uri(), Duration.ofSeconds(5)));
    return track(new RedisUsageStore(link, Duration.ofSeconds(5), Duration.ofMillis(100), Duration.ofHours(1), false,
        clock));
  }

  static void use(UsageStore store, String team, long tokens) {
    ReserveOutcome outcome = store.reserve(GOLD, team, 1, Long.MAX_VALUE);
    assertThat(outcome.admitted()).isTrue();
    store.settle(outcome.hold(), tokens);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"memory", "embedded", "redis"})
  void usageThatWouldOverflowStopsAtTheLargestCountInsteadOfWrappingNegative(String kind) {
    UsageStore store = open(kind);

    use(store, "web", Long.MAX_VALUE);
    use(store, "web", Long.MAX_VALUE);

    assertThat(store.usage(GOLD).used()).isEqualTo(Long.MAX_VALUE);
    assertThat(store.teamUsage("2026-11").get("web")).isEqualTo(Long.MAX_VALUE);
    assertThat(store.status().healthy()).isTrue();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"memory", "embedded", "redis"})
  void spendThatWouldOverflowStopsAtTheLargestAmount(String kind) {
    UsageStore store = open(kind);

    store.addSpend("2026-11", "web", Tier.GOLD, Long.MAX_VALUE, false);
    store.addSpend("2026-11", "web", Tier.GOLD, Long.MAX_VALUE, false);

    assertThat(store.teamSpend("2026-11", "web")).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void anErrorRedisAnswersWithIsNotAnOutage() {
    RedisServer redis = track(RedisServer.start());
    RedisUsageStore store = redisStore(redis);
    use(store, "web", 10);
    // Something else wrote a value no script can add to: Redis answers every settlement with an error.
    assertThat(redis.command("HSET {spillway:quota:2026-11}:pool:gold used not-a-number")).isEqualTo(":0");

    use(store, "web", 5);

    assertThat(store.reachable()).as("Redis answered (with an error): it is not away").isTrue();
    assertThat(store.status().pendingSettlements()).as("nothing queued to replay into the same error").isZero();
  }
}
