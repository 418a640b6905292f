package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigProblemsTest {
  private final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  @Test
  void everyProblemIsReportedAtOnceUnderItsKeyPath() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", """
        server: { port: 70000 }
        keys:
          - { team: a, tier: gold, key: k }
          - { team: b, tier: platinum, key: j }
        cache: { scope: user, ttl: 0s }
        failover: { capacityStreak: 0 }
        store: nowhere
        """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("key 'server.port': 70000 is not a port")
        .hasMessageContaining("key 'keys[1].tier': 'platinum' is not one of gold, silver, bronze")
        .hasMessageContaining("key 'cache.scope': 'user' is not one of team, tier, global")
        .hasMessageContaining("key 'cache.ttl': must be longer than 0s")
        .hasMessageContaining("key 'failover.capacityStreak': must be at least 1")
        .hasMessageContaining("key 'store': 'nowhere' is not embedded:<dir>");
  }

  @Test
  void aChoiceIsSpelledCaseSensitivelyAsInYaml() {
    assertThat(loader.parse("gw.yaml", "cache: { scope: global }").cache().scope()).isEqualTo(CacheConfig.Scope.GLOBAL);
    assertThatThrownBy(() -> loader.parse("gw.yaml", "cache: { scope: Global }"))
        .hasMessageContaining("key 'cache.scope': 'Global' is not one of team, tier, global");
  }

  @Test
  void aRecordBuiltInCodeThrowsOnItsFirstProblem() {
    assertThatThrownBy(() -> new FailoverConfig(0, null, null, null, null, null, null, null))
        .isInstanceOf(ConfigException.class)
        .hasMessage("key 'failover.capacityStreak': must be at least 1");
    assertThat(new FailoverConfig(2, Duration.ofMinutes(1), null, null, null, null, null, null).capacityStreak())
        .isEqualTo(2);
  }

  @Test
  void anUnknownTierIsReportedWithTheKnownOnesBesideOtherProblems() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", """
        quota:
          tiers:
            platinum: { share: 0.1 }
            silver: { requestsPerHour: 0 }
        cloud:
          routes:
            - { name: a, kind: bedrock, baseUrl: "https://a.example/v1" }
        """))
        .hasMessageContaining("unknown key 'quota.tiers.platinum' (known keys here: bronze, gold, silver)")
        .hasMessageContaining("key 'quota.tiers.silver.requestsPerHour': must be at least 1")
        .hasMessageContaining("key 'cloud.routes[0].kind': 'bedrock' is not one of openai, azure");
  }

  @Test
  void perTierSectionsAreMapsWithEveryTierAndPrintAsWritten() {
    GatewayConfig config = loader.parse("gw.yaml", "quota:\n  tiers:\n    bronze: { share: 0.1 }\n");
    assertThat(config.quota().tiers()).containsOnlyKeys(io.spillway.core.pipeline.Tier.values());
    assertThat(config.quota().tier(io.spillway.core.pipeline.Tier.BRONZE).share()).isEqualTo(0.1);
    assertThat(config.quota().tier(io.spillway.core.pipeline.Tier.BRONZE).maxWait()).isEqualTo(Duration.ofSeconds(5));
    assertThat(ConfigPrinter.toMaskedYaml(config)).contains("    bronze:\n      share: 0.1");
    assertThat(loader.parse("again.yaml", ConfigPrinter.toMaskedYaml(config)).quota()).isEqualTo(config.quota());
  }

  @Test
  void theLocalSectionReportsItsChoicesAndServersTogether() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", """
        local:
          kind: Ollama
          responsesApi: websocket
          keepWarmEvery: 500ms
          servers:
            - { name: a, baseUrl: "http://gpu-a:11434" }
            - { name: a, kind: vllm }
        shaping:
          degrade: sometimes
          tiers:
            silver: { steps: [trim, teleport] }
        """))
        .hasMessageContaining("key 'local.kind': 'Ollama' is not one of ollama, openai")
        .hasMessageContaining("key 'local.responsesApi': 'websocket' is not one of chat, native")
        .hasMessageContaining("key 'local.keepWarmEvery': must be at least 1s")
        .hasMessageContaining("key 'local.servers[1].kind': 'vllm' is not one of ollama, openai")
        .hasMessageContaining("key 'local.servers[1].baseUrl': every server needs a baseUrl")
        .hasMessageContaining("key 'local.servers[1].name': 'a' names two servers")
        .hasMessageContaining("key 'shaping.degrade': 'sometimes' is not one of never, pressure, always")
        .hasMessageContaining("key 'shaping.tiers.silver.steps': 'teleport' is not one of trim, downgrade, model, local");
  }

  @Test
  void unknownKeysAndUnreadableValuesAreReportedBesideTheRest() {
    assertThatThrownBy(() -> loader.parse("gw.yaml", """
        server: { prot: 80, maxRequestSize: 8 parsecs }
        failover: { localFor: five minutes, capacityStreak: 0 }
        """))
        .hasMessageStartingWith("gw.yaml: ")
        .hasMessageContaining("unknown key 'server.prot' (known keys here: ")
        .hasMessageContaining("key 'server.maxRequestSize': '8 parsecs' has an unknown unit")
        .hasMessageContaining("key 'failover.localFor': ")
        .hasMessageContaining("not a duration")
        .hasMessageContaining("key 'failover.capacityStreak': must be at least 1");
  }
}
