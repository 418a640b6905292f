package io.spillway.quota.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.QuotaConfig;
import io.spillway.config.QuotaConfig.TeamConfig;
import io.spillway.config.QuotaConfig.TierConfig;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplicaRequestLimiterTest {
  private static final Caller WEB = new Caller("web", Tier.SILVER, "k1");
  private static final Caller MOBILE = new Caller("mobile", Tier.SILVER, "k2");
  private static final Caller SANDBOX = new Caller("sandbox", Tier.BRONZE, "k3");
  private static final Caller SCRIPTS = new Caller("scripts", Tier.BRONZE, "k4");
  private static final Caller RELEASE = new Caller("release", Tier.GOLD, "k5");

  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");

  @Test
  void silverTeamGetsItsPerMinuteLimitThenIsRefused() {
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock);

    for (int i = 1; i <= 50; i++) {
      Decision decision = limiter.acquire(WEB);
      assertThat(decision.allowed()).isTrue();
      assertThat(decision.remaining()).isEqualTo(50 - i);
    }
    Decision refused = limiter.acquire(WEB);

    assertThat(refused.allowed()).isFalse();
    assertThat(refused.remaining()).isZero();
    assertThat(refused.retryAfter()).as("one request every 60s/50").isEqualTo(Duration.ofMillis(1200));
    assertThat(refused.reset()).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void newLimitsApplyAtOnceAndAnUnchangedLimitKeepsItsBucket() {
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock);
    for (int i = 0; i < 50; i++) {
      limiter.acquire(WEB);
    }
    assertThat(limiter.acquire(WEB).allowed()).isFalse();

    limiter.limits(new RateLimitPolicy(QuotaConfig.DEFAULTS));
    assertThat(limiter.acquire(WEB).allowed()).as("same limit, same bucket: still used up").isFalse();

    QuotaConfig twice = new QuotaConfig(null, null, null,
        Map.of(Tier.SILVER, new TierConfig(null, null, 100, null, null)),
        null, null, null, null, null, null, null, null, null);
    limiter.limits(new RateLimitPolicy(twice));
    Decision fresh = limiter.acquire(WEB);
    assertThat(fresh.allowed()).isTrue();
    assertThat(fresh.limit().capacity()).isEqualTo(100);
  }

  @Test
  void twoSilverTeamsDoNotShareABucket() {
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock);
    for (int i = 0; i < 50; i++) {
      limiter.acquire(WEB);
    }

    assertThat(limiter.acquire(WEB).allowed()).isFalse();
    Decision mobile = limiter.acquire(MOBILE);
    assertThat(mobile.allowed()).isTrue();
    assertThat(mobile.remaining()).isEqualTo(49);
  }

  @Test
  void bronzeTeamsShareTheTiersHourlyBucket() {
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock);
    for (int i = 0; i < 100; i++) {
      limiter.acquire(SANDBOX);
      limiter.acquire(SCRIPTS);
    }

    Decision refused = limiter.acquire(SCRIPTS);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfter()).as("one request every 3600s/200").isEqualTo(Duration.ofSeconds(18));
    assertThat(limiter.acquire(SANDBOX).allowed()).isFalse();
  }

  @Test
  void limitsRefillWithTheClock() {
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock);
    for (int i = 0; i < 50; i++) {
      limiter.acquire(WEB);
    }
    assertThat(limiter.acquire(WEB).allowed()).isFalse();

    clock.advance(Duration.ofMillis(1199));
    assertThat(limiter.acquire(WEB).allowed()).isFalse();
    clock.advance(Duration.ofMillis(1));
    Decision one = limiter.acquire(WEB);
    assertThat(one.allowed()).isTrue();
    assertThat(one.remaining()).isZero();

    clock.advance(Duration.ofMinutes(1));
    Decision full = limiter.acquire(WEB);
    assertThat(full.remaining()).isEqualTo(49);
    assertThat(full.reset()).isEqualTo(Duration.ofMillis(1200));
  }

  @Test
  void goldIsUnlimited() {
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(QuotaConfig.DEFAULTS), clock);
    for (int i = 0; i < 1000; i++) {
      assertThat(limiter.acquire(RELEASE)).isEqualTo(Decision.UNLIMITED);
    }
  }

  @Test
  void refusedRequestCostsNothingInTheOtherLimits() {
    Map<Tier, TierConfig> tiers = Map.of(Tier.BRONZE, new TierConfig(null, null, 3, 5, null));
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(
        new QuotaConfig(null, null, null, tiers, null, null, null, null, null, null, null, null, null)), clock);

    for (int i = 0; i < 3; i++) {
      assertThat(limiter.acquire(SANDBOX).allowed()).isTrue();
    }
    Decision byMinute = limiter.acquire(SANDBOX);
    assertThat(byMinute.allowed()).isFalse();
    assertThat(byMinute.limit().period()).isEqualTo(Duration.ofMinutes(1));

    Decision other = limiter.acquire(SCRIPTS);
    assertThat(other.allowed()).isTrue();
    assertThat(other.remaining()).as("the hourly bucket saw 4 requests, not 5").isEqualTo(1);
    assertThat(other.limit().period()).isEqualTo(Duration.ofHours(1));

    Decision byHour = limiter.acquire(SCRIPTS);
    assertThat(byHour.allowed()).isTrue();
    Decision refusedByHour = limiter.acquire(SCRIPTS);
    assertThat(refusedByHour.allowed()).isFalse();
    assertThat(refusedByHour.limit().period()).isEqualTo(Duration.ofHours(1));
    clock.advance(Duration.ofMinutes(1));
    assertThat(limiter.acquire(SANDBOX).allowed()).as("the tier's hourly bucket binds every team").isFalse();
  }

  @Test
  void teamOverrideGivesGoldTeamALimit() {
    ReplicaRequestLimiter limiter = new ReplicaRequestLimiter(new RateLimitPolicy(new QuotaConfig(
        null, null, null, null, null, null, null, null, Map.of("release", new TeamConfig(2, null)), null, null, null, null)), clock);

    assertThat(limiter.acquire(RELEASE).allowed()).isTrue();
    assertThat(limiter.acquire(RELEASE).allowed()).isTrue();
    assertThat(limiter.acquire(RELEASE).allowed()).isFalse();
  }
}
