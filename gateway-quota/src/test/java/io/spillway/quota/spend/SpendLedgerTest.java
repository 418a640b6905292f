package io.spillway.quota.spend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assertions.within;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.QuotaConfig;
import io.spillway.config.SpendConfig;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.quota.pool.QuotaCalendar;
import io.spillway.quota.pool.TokenUsage;
import io.spillway.quota.store.MemoryUsageStore;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SpendLedgerTest {
  private final FakeClock clock = FakeClock.at("2026-11-30T23:00:00Z");
  private final QuotaCalendar calendar = new QuotaCalendar(clock, ZoneId.of("UTC"));
  private static final Caller CI = new Caller("ci", Tier.SILVER, null);

  private SpendLedger ledger(Map<String, SpendConfig.TeamBudgetConfig> teams) {
    return new SpendLedger(new SpendConfig(null, null, teams), QuotaConfig.DEFAULTS, () -> calendar,
        new MemoryUsageStore(), new SimpleMeterRegistry());
  }

  @Test
  void aDatedSnapshotIsPricedAsItsModelAndLocalCostsNothing() {
    SpendLedger ledger = ledger(null);

    double cloud = ledger.record(CI, BackendKind.CLOUD, "gpt-4o-mini-2024-07-18", new TokenUsage(2_000_000, 1_000_000, 1_000_000));
    double local = ledger.record(CI, BackendKind.LOCAL, "gpt-4o-mini", new TokenUsage(2_000_000, 1_000_000));

    assertThat(cloud).isCloseTo(0.15 + 0.075 + 0.60, within(1e-12));
    assertThat(local).isZero();
    assertThat(ledger.spent("ci")).isCloseTo(0.825, within(1e-12));
  }

  @Test
  void aClaudeSnapshotIsPricedWithItsCacheReadsAndWritesEachAtTheirRate() {
    SpendLedger ledger = ledger(null);

    // 4M prompt tokens: 1M uncached, 2M read from Anthropic's cache, 1M written to it; 1M output.
    double cost = ledger.record(CI, BackendKind.CLOUD, "claude-sonnet-4-5-20250929",
        new TokenUsage(4_000_000, 1_000_000, 2_000_000, 1_000_000));

    assertThat(cost).isCloseTo(3.00 + 2 * 0.30 + 3.75 + 15.00, within(1e-12));
  }

  @Test
  void aPriceWithoutACacheWriteRateChargesWritesAsInput() {
    SpendLedger ledger = new SpendLedger(new SpendConfig(false,
        Map.of("in-house", new SpendConfig.PriceConfig(1.00, 0.10, 2.00)), null), QuotaConfig.DEFAULTS,
        () -> calendar, new MemoryUsageStore(), new SimpleMeterRegistry());

    double cost = ledger.record(CI, BackendKind.CLOUD, "in-house", new TokenUsage(2_000_000, 0, 0, 1_000_000));

    assertThat(cost).isCloseTo(2 * 1.00, within(1e-12));
  }

  @Test
  void aTeamRefusedForItsBudgetIsServedAgainWhenTheMonthTurns() {
    SpendLedger ledger = ledger(Map.of("ci", new SpendConfig.TeamBudgetConfig(0.5)));
    ledger.record(CI, BackendKind.CLOUD, "gpt-4o", new TokenUsage(0, 100_000));

    GatewayException refused = catchThrowableOfType(GatewayException.class, () -> ledger.checkBudget(CI));
    clock.advance(Duration.ofHours(1));

    assertThat(refused.kind().status()).isEqualTo(429);
    assertThat(refused.retryAfter()).isEqualTo(Duration.ofHours(1));
    assertThatCode(() -> ledger.checkBudget(CI)).doesNotThrowAnyException();
    assertThat(ledger.spent("ci")).isZero();
    assertThat(ledger.report().get("month").asText()).isEqualTo("2026-12");
  }
}
