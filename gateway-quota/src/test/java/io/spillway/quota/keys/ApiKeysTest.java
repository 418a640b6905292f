package io.spillway.quota.keys;

import io.spillway.redis.RedisLink;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.QuotaConfig;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.quota.ratelimit.RateLimit;
import io.spillway.quota.ratelimit.RateLimitPolicy;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ApiKeysTest {
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");

  private static ApiKeys.NewKey key(String team, Tier tier) {
    return new ApiKeys.NewKey(team, tier, null, List.of(), null, null);
  }

  @Test
  void aCreatedKeyAuthenticatesByItsSecretAndStoresOnlyItsHash() {
    MemoryKeyStore store = new MemoryKeyStore();
    try (ApiKeys keys = new ApiKeys(store, clock)) {
      ApiKeys.Issued issued = keys.create(key("ci", Tier.GOLD));

      assertThat(keys.authenticate(issued.secret()).key().id()).isEqualTo(issued.key().id());
      assertThat(keys.authenticate(issued.secret() + "x")).isNull();
      assertThat(store.all()).singleElement().satisfies(stored -> {
        assertThat(stored.hash()).isEqualTo(KeyHashes.hash(issued.secret()));
        assertThat(stored.toStored()).doesNotContain(issued.secret());
      });
    }
  }

  @Test
  void aChangeMadeThroughOneInstanceReachesAnotherOnItsNextSync() {
    MemoryKeyStore shared = new MemoryKeyStore();
    try (ApiKeys a = new ApiKeys(shared, clock); ApiKeys b = new ApiKeys(shared, clock)) {
      ApiKeys.Issued issued = a.create(key("ci", Tier.SILVER));
      assertThat(b.authenticate(issued.secret())).as("before b syncs").isNull();

      b.sync();
      assertThat(b.authenticate(issued.secret())).isNotNull();

      a.revoke(issued.key().id());
      b.sync();
      assertThat(b.authenticate(issued.secret())).isNull();
    }
  }

  @Test
  void rotationKeepsTheIdAndAcceptsTheOldSecretAsPrevious() {
    try (ApiKeys keys = new ApiKeys(new MemoryKeyStore(), clock)) {
      ApiKeys.Issued first = keys.create(key("ci", Tier.BRONZE));

      ApiKeys.Issued second = keys.rotate(first.key().id(), Duration.ofMinutes(5));

      assertThat(second.key().id()).isEqualTo(first.key().id());
      assertThat(second.key().previousUntil()).isEqualTo(Instant.parse("2026-11-10T10:05:00Z"));
      assertThat(keys.authenticate(second.secret()).previous()).isFalse();
      assertThat(keys.authenticate(first.secret()).previous()).isTrue();
      assertThat(keys.rotate("key_missing", Duration.ZERO)).isNull();
    }
  }

  @Test
  void theEmbeddedStoreKeepsKeysAndUsageAcrossAReopen(@TempDir Path dir) {
    ApiKeys.Issued issued;
    try (ApiKeys keys = new ApiKeys(EmbeddedKeyStore.open(dir), clock)) {
      issued = keys.create(new ApiKeys.NewKey("ci", Tier.GOLD, Instant.parse("2027-01-01T00:00:00Z"),
          List.of("gpt-4o"), 1000L, 5));
      keys.add("2026-11", issued.key().id(), 42);
    }
    try (ApiKeys keys = new ApiKeys(EmbeddedKeyStore.open(dir), clock)) {
      ApiKey reopened = keys.authenticate(issued.secret()).key();
      assertThat(reopened).isEqualTo(issued.key());
      assertThat(keys.used("2026-11", issued.key().id())).isEqualTo(42);
      assertThat(keys.monthlyTokens(issued.key().id())).isEqualTo(1000L);
    }
  }

  @Test
  void aKeysOwnRequestLimitIsOneMoreBucketBesideItsTeamsLimits() {
    try (ApiKeys keys = new ApiKeys(new MemoryKeyStore(), clock)) {
      ApiKeys.Issued limited = keys.create(new ApiKeys.NewKey("web", Tier.SILVER, null, List.of(), null, 7));
      RateLimitPolicy policy = new RateLimitPolicy(QuotaConfig.DEFAULTS, keys);

      List<RateLimit> limits = policy.limitsFor(new Caller("web", Tier.SILVER, limited.key().id()));
      List<RateLimit> teamOnly = policy.limitsFor(new Caller("web", Tier.SILVER, "1a2b3c4d"));

      assertThat(limits).hasSize(2);
      assertThat(limits.get(1).capacity()).isEqualTo(7);
      assertThat(limits.get(1).scope()).isEqualTo("key " + limited.key().id());
      assertThat(teamOnly).hasSize(1).isEqualTo(limits.subList(0, 1));
    }
  }

  @Test
  void anExpiredKeyAndTheAllowListAreJudgedOnTheKey() {
    ApiKey key = new ApiKey("key_1", "ci", Tier.GOLD, KeyHashes.hash("s"), clock.instant(),
        Instant.parse("2026-11-10T11:00:00Z"), List.of("gpt-4o-mini"), null, null, null, null);

    assertThat(key.expired(clock.instant())).isFalse();
    assertThat(key.expired(Instant.parse("2026-11-10T11:00:00Z"))).isTrue();
    assertThat(key.allows("gpt-4o-mini")).isTrue();
    assertThat(key.allows("gpt-4o")).isFalse();
    assertThat(ApiKey.fromStored(key.toStored())).isEqualTo(key);
  }

  @Test
  void perKeyTokensCountedWhileRedisIsAwayAreWrittenBackWhenItAnswers(@TempDir Path dir) {
    try (RedisServer redis = RedisServer.start(dir);
        RedisLink link = RedisLink.open(redis.uri(), Duration.ofMillis(500));
        ApiKeys keys = new ApiKeys(new RedisKeyStore(link, Duration.ofMillis(500)), clock)) {
      String id = keys.create(key("ci", Tier.SILVER)).key().id();
      keys.add("2026-11", id, 100);

      redis.crash();
      keys.add("2026-11", id, 40);
      keys.sync(); // the store still does not answer: the 40 stay queued
      assertThat(keys.pendingTokens()).isEqualTo(40);

      redis.startAgain();
      keys.sync();

      assertThat(keys.pendingTokens()).isZero();
      assertThat(keys.used("2026-11", id)).as("written once, nothing lost").isEqualTo(140);
    }
  }
}
