package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.config.ConfigException;
import io.spillway.config.ConfigLoader;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.Tier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ShapingConfigTest {
  private static ShapingConfig parse(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("gateway.yaml", yaml).shaping();
  }

  @Test
  void defaultsAreTheFieldReportsNumbers() {
    ShapingConfig c = parse("");
    assertThat(c.degrade()).isEqualTo(ShapingConfig.Mode.PRESSURE);
    assertThat(c.trim().keepLastLines()).isEqualTo(50);
    assertThat(c.trim().keepDefinitions()).isEqualTo(3);
    assertThat(c.downgrade().maxTemperature()).isEqualTo(0.3);
    assertThat(c.downgrade().maxTopP()).isEqualTo(0.7);
    assertThat(c.downgrade().maxTokensFactor()).isEqualTo(0.7);
    assertThat(c.stop().risky()).containsExactly("\n\n");
    assertThat(c.risk().threshold()).isEqualTo(0.65);
    assertThat(c.risk().hold()).isEqualTo(Duration.ofMinutes(15));
    assertThat(c.risk().latencyBaseline()).isEqualTo(Duration.ofMillis(800));
    assertThat(c.risk().weights().growth()).isEqualTo(0.4);
    assertThat(c.signal().base64MinChars()).isEqualTo(1024);
    assertThat(c.tier(Tier.GOLD).degrade()).isEqualTo(ShapingConfig.Mode.NEVER);
    assertThat(c.tier(Tier.BRONZE).degrade()).isNull();
    assertThat(ShapingConfig.DEFAULTS.tiers()).isEqualTo(c.tiers());
  }

  @Test
  void everyKeyIsReadFromYaml() {
    ShapingConfig c = parse("""
        shaping:
          degrade: always
          tiers:
            gold: { degrade: pressure, trimAboveTokens: 90000 }
            bronze: { trimAboveTokens: 8000, pressureTrimAboveTokens: 500, keepLastLines: 30, keepDefinitions: 2,
                      steps: [trim, downgrade] }
          trim: { keepLastLines: 40, keepDefinitions: 4, keepTraceDefinitions: 2, maxDefinitionLines: 60,
                  marker: "# ...", roles: [user] }
          downgrade: { maxTemperature: 0.2, maxTopP: 0.5, maxTokensFactor: 0.5 }
          stop: { apply: always, risky: ["\\n\\n", "\\n\\n\\n"], maxTokens: 256 }
          signal: { enabled: false, maxNestedLoops: 4, base64MinChars: 2048, placeholderRepeats: 3,
                    hotTemperature: 1.0, hotMaxTokens: 1000 }
          risk: { threshold: 0.5, hold: 5m, weights: { growth: 0.2, latency: 0.4, errors: 0.4 },
                  latencyBaseline: 1s, growthWindow: 30m, window: 2m, minRequests: 10, minSamples: 5, tiers: [bronze] }
          ladder: { risk: trim, softBand: downgrade, breaker: model, always: local }
          models:
            - { from: "gpt-4o*", to: gpt-4o-mini, when: any }
          scenarios: { singleLineMaxTokens: 32, shortPromptTokens: 500 }
        """);
    assertThat(c.degrade()).isEqualTo(ShapingConfig.Mode.ALWAYS);
    assertThat(c.tier(Tier.GOLD).trimAboveTokens()).isEqualTo(90000);
    assertThat(c.tier(Tier.BRONZE).steps()).containsExactly(ShapingConfig.Step.TRIM, ShapingConfig.Step.DOWNGRADE);
    assertThat(c.tier(Tier.SILVER).trimAboveTokens()).isEqualTo(64000);
    assertThat(c.trim().marker()).isEqualTo("# ...");
    assertThat(c.stop().risky()).containsExactly("\n\n", "\n\n\n");
    assertThat(c.risk().weights().latency()).isEqualTo(0.4);
    assertThat(c.risk().window()).isEqualTo(Duration.ofMinutes(2));
    assertThat(c.ladder().always()).isEqualTo(ShapingConfig.Step.LOCAL);
    assertThat(c.models()).containsExactly(new ShapingConfig.ModelRule("gpt-4o*", "gpt-4o-mini", ShapingConfig.Scenario.ANY));
    assertThat(c.scenarios().shortPromptTokens()).isEqualTo(500);
  }

  @Test
  void theDocumentedDefaultConfigSpellsOutTheDefaults() {
    ShapingConfig documented = new ConfigLoader(Map.of("SPILLWAY_CLOUD_API_KEY", "sk-cloud", "SPILLWAY_CI_KEY", "ci")::get)
        .load(Path.of("../config/gateway.yaml")).shaping();
    assertThat(documented).isEqualTo(ShapingConfig.DEFAULTS);
  }

  @Test
  void badValuesAreNamedByKey() {
    record Case(String yaml, String message) {}
    for (Case bad : List.of(
        new Case("shaping:\n  degrade: sometimes\n", "'shaping.degrade'"),
        new Case("shaping:\n  tiers:\n    bronze: { degrade: maybe }\n", "'shaping.tiers.bronze.degrade'"),
        new Case("shaping:\n  tiers:\n    silver: { steps: [trim, teleport] }\n", "'shaping.tiers.silver.steps'"),
        new Case("shaping:\n  downgrade: { maxTokensFactor: 1.5 }\n", "'shaping.downgrade.maxTokensFactor'"),
        new Case("shaping:\n  downgrade: { maxTopP: 2 }\n", "'shaping.downgrade.maxTopP'"),
        new Case("shaping:\n  trim: { keepLastLines: 0 }\n", "'shaping.trim.keepLastLines'"),
        new Case("shaping:\n  trim: { marker: \"a\\nb\" }\n", "'shaping.trim.marker'"),
        new Case("shaping:\n  stop: { risky: [\"\"] }\n", "'shaping.stop.risky'"),
        new Case("shaping:\n  risk: { window: 0s }\n", "'shaping.risk.window'"),
        new Case("shaping:\n  risk: { tiers: [platinum] }\n", "'shaping.risk.tiers'"),
        new Case("shaping:\n  ladder: { breaker: panic }\n", "'shaping.ladder.breaker'"),
        new Case("shaping:\n  models:\n    - { from: gpt-4o, when: tuesday }\n", "'shaping.models[0]"),
        new Case("shaping:\n  tiers:\n    platinum: { degrade: never }\n", "unknown key 'shaping.tiers.platinum'"),
        new Case("shaping:\n  trim: { keepLines: 5 }\n", "unknown key 'shaping.trim.keepLines'"))) {
      assertThatThrownBy(() -> parse(bad.yaml())).as(bad.yaml())
          .isInstanceOf(ConfigException.class).hasMessageContaining(bad.message());
    }
  }
}
