package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RateLimitAndAdmissionConfigTest {
  private final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  @Test
  void defaultsAreTheDesignsNumbers() {
    QuotaConfig quota = loader.parse("test", "").quota();

    assertThat(quota.tier(Tier.GOLD).requestsPerMinutePerTeam()).isNull();
    assertThat(quota.tier(Tier.GOLD).requestsPerHour()).isNull();
    assertThat(quota.tier(Tier.SILVER).requestsPerMinutePerTeam()).isEqualTo(50);
    assertThat(quota.tier(Tier.BRONZE).requestsPerHour()).isEqualTo(200);
    assertThat(quota.tier(Tier.BRONZE).maxWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(quota.admission().cloudConcurrency()).isEqualTo(512);
    assertThat(quota.admission().localConcurrency()).isEqualTo(8);
    assertThat(quota.admission().queueSize()).isEqualTo(10_000);
  }

  @Test
  void teamOverridesAndAdmissionAreRead() {
    QuotaConfig quota = loader.parse("test", """
        quota:
          teams:
            web: { requestsPerMinute: 120 }
          admission: { cloudConcurrency: 64, queueSize: 0 }
        """).quota();

    assertThat(quota.teams().get("web").requestsPerMinute()).isEqualTo(120);
    assertThat(quota.admission().cloudConcurrency()).isEqualTo(64);
    assertThat(quota.admission().queueSize()).isZero();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "quota: {tiers: {silver: {requestsPerMinutePerTeam: 0}}} | quota.tiers.silver.requestsPerMinutePerTeam",
      "quota: {tiers: {bronze: {requestsPerHour: -1}}}         | quota.tiers.bronze.requestsPerHour",
      "quota: {tiers: {gold: {maxWait: -1s}}}                  | quota.tiers.gold.maxWait",
      "quota: {teams: {web: {requestsPerMinute: 0}}}           | quota.teams.web.requestsPerMinute",
      "quota: {admission: {cloudConcurrency: 0}}               | quota.admission.cloudConcurrency",
      "quota: {admission: {localConcurrency: 0}}               | quota.admission.localConcurrency",
      "quota: {admission: {queueSize: -1}}                     | quota.admission.queueSize",
  })
  void impossibleLimitsAreRejectedNamingTheKey(String yaml, String key) {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("gateway.yaml")
        .hasMessageContaining("'" + key + "'");
  }
}
