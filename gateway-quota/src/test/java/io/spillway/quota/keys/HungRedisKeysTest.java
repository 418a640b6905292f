package io.spillway.quota.keys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.redis.RedisLink;
import io.spillway.redis.testing.RedisServer;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A Redis that hangs (frozen with SIGSTOP, not down) under the API keys (issue 25, finding 5): a key's
 * budget check answers from the last figure instead of failing the request, and per-key usage sent
 * while Redis hung is counted exactly once after it wakes, though Redis did take the first write.
 */
class HungRedisKeysTest {
  static final Duration TIMEOUT = Duration.ofMillis(500);
  static final String MONTH = "2026-11";

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  RedisServer redis;
  RedisLink link;
  ApiKeys keys;

  @BeforeEach
  void start() {
    redis = RedisServer.start();
    link = RedisLink.open(redis.uri(), Duration.ofSeconds(5));
    keys = new ApiKeys(new RedisKeyStore(link, TIMEOUT), clock);
  }

  @AfterEach
  void stop() {
    if (redis != null) {
      redis.thaw();
    }
    if (keys != null) {
      keys.close();
    }
    if (link != null) {
      link.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  String keyWithABudget() {
    return keys.create(new ApiKeys.NewKey("ci", Tier.SILVER, null, List.of(), 1000L, null)).key().id();
  }

  @Test
  void aBudgetCheckAgainstAHungRedisAnswersFromTheLastFigureInsteadOfFailing() {
    String id = keyWithABudget();
    keys.add(MONTH, id, 100);
    assertThat(keys.used(MONTH, id)).isEqualTo(100);

    redis.freeze();
    // Redis stays frozen until this returned: only the store's timeout can end the wait.
    long used = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> keys.used(MONTH, id));

    assertThat(used).as("the last figure Redis answered, not an error").isEqualTo(100);
    assertThat(keys.monthlyTokens(id)).isEqualTo(1000L);
  }

  @Test
  void usageSentWhileRedisHungIsCountedOnceAfterItWakes() {
    String id = keyWithABudget();
    keys.add(MONTH, id, 100);

    redis.freeze();
    keys.add(MONTH, id, 40); // the write reached Redis's socket; its answer did not come in time
    assertThat(keys.pendingTokens()).isEqualTo(40);
    redis.thaw();

    await("written back once Redis answers").atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
      keys.sync();
      assertThat(keys.pendingTokens()).isZero();
    });
    assertThat(keys.used(MONTH, id)).as("Redis ran the first write when it woke; the write-back counted nothing more")
        .isEqualTo(140);
  }
}
