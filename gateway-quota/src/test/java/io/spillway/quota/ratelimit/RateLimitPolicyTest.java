package io.spillway.quota.ratelimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.spillway.config.QuotaConfig;
import io.spillway.config.QuotaConfig.TeamConfig;
import io.spillway.config.QuotaConfig.TierConfig;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RateLimitPolicyTest {
  private static final RateLimitPolicy DEFAULTS = new RateLimitPolicy(QuotaConfig.DEFAULTS);

  @Test
  void goldHasNoRequestLimitByDefault() {
    assertThat(DEFAULTS.limitsFor(new Caller("release", Tier.GOLD, "k"))).isEmpty();
  }

  @Test
  void silverIsLimitedPerTeamToFiftyAMinuteByDefault() {
    List<RateLimit> web = DEFAULTS.limitsFor(new Caller("web", Tier.SILVER, "k1"));
    List<RateLimit> mobile = DEFAULTS.limitsFor(new Caller("mobile", Tier.SILVER, "k2"));

    assertThat(web).singleElement().satisfies(limit -> {
      assertThat(limit.capacity()).isEqualTo(50);
      assertThat(limit.period()).isEqualTo(Duration.ofMinutes(1));
      assertThat(limit.scope()).isEqualTo("team web");
    });
    assertThat(web.get(0).key()).isNotEqualTo(mobile.get(0).key());
  }

  @Test
  void bronzeSharesOneHourlyBucketOfTwoHundredAcrossTeams() {
    List<RateLimit> sandbox = DEFAULTS.limitsFor(new Caller("sandbox", Tier.BRONZE, "k1"));
    List<RateLimit> scripts = DEFAULTS.limitsFor(new Caller("scripts", Tier.BRONZE, "k2"));

    assertThat(sandbox).singleElement().satisfies(limit -> {
      assertThat(limit.capacity()).isEqualTo(200);
      assertThat(limit.period()).isEqualTo(Duration.ofHours(1));
      assertThat(limit.scope()).isEqualTo("the bronze tier");
    });
    assertThat(scripts).isEqualTo(sandbox);
  }

  @Test
  void keysOfOneTeamShareItsBucket() {
    assertThat(DEFAULTS.limitsFor(new Caller("web", Tier.SILVER, "key-a")))
        .isEqualTo(DEFAULTS.limitsFor(new Caller("web", Tier.SILVER, "key-b")));
  }

  @Test
  void teamOverridesReplaceTheTiersLimitsAndApplyToGoldToo() {
    QuotaConfig config = new QuotaConfig(null, null, null, null, null, null, null, null,
        Map.of("web", new TeamConfig(120, null), "nightly", new TeamConfig(null, 30), "release", new TeamConfig(600, null)),
        null, null, null, null);
    RateLimitPolicy policy = new RateLimitPolicy(config);

    assertThat(policy.limitsFor(new Caller("web", Tier.SILVER, "k")))
        .extracting(RateLimit::capacity, RateLimit::period)
        .containsExactly(tuple(120L, Duration.ofMinutes(1)));
    List<RateLimit> nightly = policy.limitsFor(new Caller("nightly", Tier.BRONZE, "k"));
    assertThat(nightly).singleElement().satisfies(limit -> {
      assertThat(limit.capacity()).isEqualTo(30);
      assertThat(limit.scope()).isEqualTo("team nightly");
    });
    assertThat(nightly.get(0).key()).isNotEqualTo(policy.limitsFor(new Caller("other", Tier.BRONZE, "k")).get(0).key());
    assertThat(policy.limitsFor(new Caller("release", Tier.GOLD, "k")))
        .extracting(RateLimit::capacity).containsExactly(600L);
  }

  @Test
  void everyTiersFieldsAreHonouredWhenSet() {
    Map<Tier, TierConfig> tiers = Map.of(
        Tier.GOLD, new TierConfig(null, null, null, 1000, null),
        Tier.SILVER, new TierConfig(null, null, 20, 500, null),
        Tier.BRONZE, new TierConfig(null, null, 5, null, null));
    RateLimitPolicy policy = new RateLimitPolicy(
        new QuotaConfig(null, null, null, tiers, null, null, null, null, null, null, null, null, null));

    assertThat(policy.limitsFor(new Caller("release", Tier.GOLD, "k")))
        .extracting(RateLimit::capacity, RateLimit::period)
        .containsExactly(tuple(1000L, Duration.ofHours(1)));
    assertThat(policy.limitsFor(new Caller("web", Tier.SILVER, "k")))
        .extracting(RateLimit::capacity).containsExactly(20L, 500L);
    assertThat(policy.limitsFor(new Caller("sandbox", Tier.BRONZE, "k")))
        .extracting(RateLimit::capacity).containsExactly(5L, 200L);
  }
}
