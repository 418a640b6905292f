package io.spillway.quota.pool;

import static io.spillway.quota.testing.QuotaTesting.config;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.config.ConfigException;
import io.spillway.config.QuotaConfig;
import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class QuotaConfigContractTest {
  @Test
  void theDesignsQuotaSectionIsAcceptedExactlyAsWritten() {
    QuotaConfig quota = config("""
        quota:
          monthlyTokens: 50000000
          alertAt: 0.80
          softAt: 0.95
          tiers:
            gold:   { share: 0.20, overdraft: 0.10 }
            silver: { share: 0.50, requestsPerMinutePerTeam: 50 }
            bronze: { share: 0.30, requestsPerHour: 200 }
        store: embedded:./data
        """).quota();

    assertThat(quota.monthlyTokens()).isEqualTo(50_000_000L);
    assertThat(quota.tier(Tier.GOLD).overdraft()).isEqualTo(0.10);
    assertThat(quota.tier(Tier.BRONZE).share()).isEqualTo(0.30);
  }

  @Test
  void accountingKeysHaveDocumentedDefaults() {
    QuotaConfig quota = config("").quota();

    assertThat(quota.timezone()).isEqualTo("UTC");
    assertThat(quota.defaultMaxTokens()).isEqualTo(1024);
    assertThat(quota.flushInterval()).isEqualTo(Duration.ofSeconds(1));
    assertThat(quota.storeTimeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(quota.alertWebhookTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(quota.failClosed()).isFalse();
  }

  @Test
  void nonsensicalAccountingValuesAreRefusedWithTheKeyNamed() {
    assertThatThrownBy(() -> config("quota: {flushInterval: 0s}")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("quota.flushInterval");
    assertThatThrownBy(() -> config("quota: {alertWebhook: 'not a url'}")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("quota.alertWebhook");
    assertThatThrownBy(() -> config("quota: {tiers: {gold: {overdraft: -0.1}}}")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("quota.tiers.gold");
    assertThatThrownBy(() -> config("quota: {defaultMaxTokens: 0}")).isInstanceOf(ConfigException.class)
        .hasMessageContaining("quota.defaultMaxTokens");
  }
}
