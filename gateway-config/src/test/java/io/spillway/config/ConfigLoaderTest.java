package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.pipeline.Tier;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigLoaderTest {
  private final ConfigLoader loader = new ConfigLoader(Map.of("OPENAI_API_KEY", "sk-env", "EMPTY", "")::get);

  @Test
  void everySectionMayBeLeftOut() {
    GatewayConfig config = loader.parse("c.yaml", "");
    assertThat(config.server().port()).isEqualTo(8080);
    assertThat(config.server().maxRequestSize()).isEqualTo(DataSize.ofMebibytes(8));
    assertThat(config.failover().capacityStreak()).isEqualTo(3);
    assertThat(config.failover().localFor()).isEqualTo(Duration.ofMinutes(5));
    assertThat(config.local().keepWarmEvery()).isEqualTo(Duration.ofMinutes(15));
    assertThat(config.quota().tier(Tier.GOLD).share()).isEqualTo(0.20);
    assertThat(config.quota().tier(Tier.GOLD).overdraft()).isEqualTo(0.10);
    assertThat(config.quota().tier(Tier.SILVER).requestsPerMinutePerTeam()).isEqualTo(50);
    assertThat(config.quota().tier(Tier.BRONZE).requestsPerHour()).isEqualTo(200);
    assertThat(config.store()).isEqualTo(new Store.Embedded(Path.of("./data")));
  }

  @Test
  void theDesignContractKeysAreAcceptedAsWritten() {
    GatewayConfig config = loader.parse("contract.yaml", """
        server:
          host: 0.0.0.0
          port: 8080
          maxRequestSize: 8MiB
          idleTimeout: 60s
        admin:
          token: t
        cloud:
          baseUrl: https://api.openai.com/v1
          apiKey: ${OPENAI_API_KEY}
          timeout: 120s
        local:
          kind: ollama
          baseUrl: http://127.0.0.1:11434
          models:
            default: qwen2.5-coder:7b
            gpt-4o-mini: llama3.2:3b
          keepWarmEvery: 15m
        failover:
          capacityStreak: 3
          localFor: 5m
        keys:
          - key: ${CI_KEY:-ci-default}
            team: ci
            tier: gold
          - keyHash: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
            team: web
            tier: silver
        quota:
          monthlyTokens: 50000000
          alertAt: 0.80
          softAt: 0.95
          tiers:
            gold:   { share: 0.20, overdraft: 0.10 }
            silver: { share: 0.50, requestsPerMinutePerTeam: 50 }
            bronze: { share: 0.30, requestsPerHour: 200 }
        shaping:
          degrade: pressure
        store: embedded:./data
        """);
    assertThat(config.cloud().apiKey()).isEqualTo("sk-env");
    assertThat(config.keys().get(0).key()).isEqualTo("ci-default");
    assertThat(config.local().mapModel("gpt-4o-mini")).isEqualTo("llama3.2:3b");
    assertThat(config.local().mapModel("gpt-4o")).isEqualTo("qwen2.5-coder:7b");
  }

  @Test
  void unknownKeysAreErrorsThatNameFileAndKey() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", "server:\n  prot: 80\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("gw.yaml").hasMessageContaining("server.prot").hasMessageContaining("unknown key");
  }

  @Test
  void unsetVariableWithoutDefaultIsAnError() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", "cloud:\n  apiKey: ${NOT_SET}\n"))
        .hasMessageContaining("cloud.apiKey").hasMessageContaining("NOT_SET");
  }

  @Test
  void emptyVariableTakesTheDefault() {
    assertThat(loader.parse("gw.yaml", "cloud:\n  baseUrl: ${EMPTY:-http://x:1/v1}\n").cloud().baseUrl())
        .isEqualTo("http://x:1/v1");
  }

  @Test
  void badDurationsAndSizesSayWhy() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", "failover:\n  localFor: five minutes\n"))
        .hasMessageContaining("failover.localFor").hasMessageContaining("not a duration");
    assertThatThrownBy(() -> loader.parse("gw.yaml", "server:\n  maxRequestSize: 8 parsecs\n"))
        .hasMessageContaining("server.maxRequestSize");
  }

  @Test
  void contradictionsAreRejected() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", "quota:\n  tiers:\n    gold: { share: 0.9 }\n"))
        .hasMessageContaining("shares add up");
    assertThatThrownBy(() -> loader.parse("gw.yaml", "keys:\n  - { team: a, tier: platinum, key: k }\n"))
        .hasMessageContaining("keys[0].tier");
    assertThatThrownBy(() -> loader.parse("gw.yaml", "keys:\n  - { team: a, tier: gold }\n"))
        .hasMessageContaining("exactly one of 'key' and 'keyHash'");
    assertThatThrownBy(() -> loader.parse("gw.yaml", "keys:\n  - { team: a, tier: gold, key: k, models: [gpt-4o, ''] }\n"))
        .hasMessageContaining("keys[0].models");
  }

  @Test
  void aConfigKeyMayNameTheModelsItMayUse() {
    GatewayConfig config = loader.parse("gw.yaml", "keys:\n  - { team: a, tier: gold, key: k, models: [gpt-4o-mini] }\n"
        + "  - { team: b, tier: bronze, key: j }\n");

    assertThat(config.keys().get(0).models()).containsExactly("gpt-4o-mini");
    assertThat(config.keys().get(1).models()).isEmpty();
  }

  @Test
  void durationsParseEveryDocumentedForm() {
    assertThat(Durations.parse("500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(Durations.parse("90s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(Durations.parse("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(Durations.parse("2d")).isEqualTo(Duration.ofDays(2));
    assertThat(Durations.format(Duration.ofMinutes(15))).isEqualTo("15m");
  }

  @Test
  void sizesParseBinaryAndDecimalUnits() {
    assertThat(DataSize.parse("8MiB").bytes()).isEqualTo(8L * 1024 * 1024);
    assertThat(DataSize.parse("64KB").bytes()).isEqualTo(64_000);
    assertThat(DataSize.parse("1024").bytes()).isEqualTo(1024);
    assertThat(DataSize.ofMebibytes(8).toString()).isEqualTo("8MiB");
  }
}
