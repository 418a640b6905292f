package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SpendConfigTest {
  static GatewayConfig parse(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("gateway.yaml", yaml);
  }

  @Test
  void withoutASpendSectionTheShippedPricesApplyAndNoTeamHasABudget() {
    SpendConfig spend = parse("").spend();

    assertThat(spend.defaultPrices()).isTrue();
    assertThat(spend.teams()).isEmpty();
    assertThat(spend.effectivePrices()).containsKeys("gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "o4-mini",
        "gpt-5", "gpt-5-mini");
    assertThat(spend.effectivePrices().get("gpt-4o-mini")).isEqualTo(new SpendConfig.PriceConfig(0.15, 0.075, 0.60));
  }

  @Test
  void theShippedTablePricesTheCurrentClaudeModelsWithTheirCacheRates() {
    SpendConfig spend = parse("").spend();

    assertThat(spend.effectivePrices()).containsKeys("claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5",
        "claude-sonnet-5-5", "claude-opus-5");
    assertThat(spend.effectivePrices().get("claude-sonnet-4-5"))
        .isEqualTo(new SpendConfig.PriceConfig(3.00, 0.30, 15.00, 3.75));
    assertThat(spend.effectivePrices().get("gpt-4o").cacheWriteOrInput()).isEqualTo(2.50);
  }

  @Test
  void aConfiguredCacheWritePriceIsReadAndANegativeOneRefused() {
    SpendConfig spend = parse("spend: { prices: { my-claude: { input: 1, cachedInput: 0.1, cacheWrite: 1.25, "
        + "output: 5 } } }").spend();

    assertThat(spend.effectivePrices().get("my-claude").cacheWriteOrInput()).isEqualTo(1.25);
    assertThatThrownBy(() -> parse("spend: { prices: { my-claude: { input: 1, cacheWrite: -1, output: 5 } } }"))
        .hasMessageContaining("spend.prices.my-claude.cacheWrite");
  }

  @Test
  void configuredPricesReplaceOrAddToTheShippedOnesOrStandAlone() {
    SpendConfig spend = parse("""
        spend:
          prices:
            gpt-4o: { input: 2.0, output: 8.0 }
            ft:gpt-4o-mini:acme: { input: 0.30, cachedInput: 0.15, output: 1.20 }
          teams:
            ci: { monthlyUsd: 250 }
        """).spend();
    SpendConfig alone = parse("spend: { defaultPrices: false, prices: { my-model: { input: 1, output: 2 } } }").spend();

    assertThat(spend.effectivePrices().get("gpt-4o").cachedInputOrInput()).isEqualTo(2.0);
    assertThat(spend.effectivePrices()).containsKeys("ft:gpt-4o-mini:acme", "gpt-5");
    assertThat(spend.teams().get("ci").monthlyUsd()).isEqualTo(250.0);
    assertThat(alone.effectivePrices()).containsOnlyKeys("my-model");
  }

  @Test
  void missingNegativeAndUnknownValuesAreErrorsThatNameTheKey() {
    assertThatThrownBy(() -> parse("spend: { prices: { gpt-4o: { input: 1.0 } } }"))
        .hasMessageContaining("spend.prices.gpt-4o.output");
    assertThatThrownBy(() -> parse("spend: { prices: { gpt-4o: { input: -1, output: 1 } } }"))
        .hasMessageContaining("spend.prices.gpt-4o.input");
    assertThatThrownBy(() -> parse("spend: { prices: { gpt-4o: { input: 1, output: 1, cached: 0.5 } } }"))
        .hasMessageContaining("unknown key").hasMessageContaining("cached");
    assertThatThrownBy(() -> parse("spend: { teams: { ci: { monthlyUsd: -5 } } }"))
        .hasMessageContaining("spend.teams.ci.monthlyUsd");
    assertThatThrownBy(() -> parse("spend: { teams: { ci: { } } }"))
        .hasMessageContaining("spend.teams.ci.monthlyUsd");
    assertThatThrownBy(() -> parse("spend: { currency: EUR }")).hasMessageContaining("unknown key 'spend.currency'");
  }
}
