package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code local} section: defaults and the checks on its keys. */
class LocalConfigTest {
  private final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  @Test
  void keepAliveDefaultsToKeepWarmEveryPlusAMargin() {
    LocalConfig local = loader.parse("test", "local:\n  keepWarmEvery: 10m\n").local();

    assertThat(local.keepAlive()).isEqualTo(Duration.ofMinutes(15));
    assertThat(LocalConfig.DEFAULTS.keepAlive()).isEqualTo(Duration.ofMinutes(20));
  }

  @Test
  void keepAliveNotLongerThanKeepWarmEveryIsRejected() {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  keepWarmEvery: 15m\n  keepAlive: 10m\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("gateway.yaml")
        .hasMessageContaining("local.keepAlive")
        .hasMessageContaining("longer than local.keepWarmEvery (15m)");
  }

  @Test
  void periodsBelowOneSecondAreRejected() {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  checkEvery: 500ms\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.checkEvery");
  }

  @Test
  void aModelEntryWithoutALocalModelIsRejected() {
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  models:\n    gpt-4o: \"\"\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.models");
  }

  @Test
  void defaultIsAddedWhenTheMappingHasNone() {
    LocalConfig local = loader.parse("test", "local:\n  models:\n    gpt-4o-mini: llama3.2:3b\n").local();

    assertThat(local.mapModel("gpt-4o-mini")).isEqualTo("llama3.2:3b");
    assertThat(local.mapModel("gpt-4o")).isEqualTo("qwen2.5-coder:7b");
  }

  @Test
  void aModelIsMappedByNameOrByNameAndContextWindow() {
    LocalConfig local = loader.parse("test", """
        local:
          models:
            default: qwen2.5-coder:7b
            gpt-4o-mini: llama3.2:3b
            gpt-4o: { model: "qwen2.5-coder:32b", contextTokens: 32768 }
        """).local();

    assertThat(local.mapModel("gpt-4o-mini")).isEqualTo("llama3.2:3b");
    assertThat(local.mapModel("gpt-4o")).isEqualTo("qwen2.5-coder:32b");
    assertThat(local.contextTokens("qwen2.5-coder:32b")).isEqualTo(32768);
    assertThat(local.contextTokens("llama3.2:3b")).isNull();
    assertThat(local.modelNames()).containsExactly(Map.entry("default", "qwen2.5-coder:7b"),
        Map.entry("gpt-4o-mini", "llama3.2:3b"), Map.entry("gpt-4o", "qwen2.5-coder:32b"));
  }

  @Test
  void theEffectiveConfigPrintsEachModelTheWayItWasWritten() {
    GatewayConfig config = loader.parse("test", """
        local:
          models:
            gpt-4o-mini: llama3.2:3b
            gpt-4o: { model: "qwen2.5-coder:32b", contextTokens: 32768 }
        """);

    String printed = ConfigPrinter.toMaskedYaml(config);

    assertThat(printed).contains("gpt-4o-mini: llama3.2:3b").contains("contextTokens: 32768");
    assertThat(loader.parse("again", printed).local()).isEqualTo(config.local());
  }

  @Test
  void aContextWindowBelowAThousandTokensOrAnUnknownModelKeyIsRejected() {
    assertThatThrownBy(() -> loader.parse("gateway.yaml",
        "local:\n  models:\n    gpt-4o: { model: qwen2.5-coder:32b, contextTokens: 512 }\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.models.gpt-4o.contextTokens");
    assertThatThrownBy(() -> loader.parse("gateway.yaml",
        "local:\n  models:\n    gpt-4o: { model: qwen2.5-coder:32b, window: 4096 }\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("unknown key")
        .hasMessageContaining("window");
  }

  @Test
  void contextFittingHasDefaultsAndRejectsContradictions() {
    LocalContextConfig defaults = LocalConfig.DEFAULTS.context();
    assertThat(defaults.defaultTokens()).isEqualTo(32768);
    assertThat(defaults.maxTokens()).isEqualTo(32768);
    assertThat(defaults.minTokens()).isEqualTo(4096);
    assertThat(defaults.outputReserveTokens()).isEqualTo(4096);

    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  context:\n    maxTokens: 2048\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.context.maxTokens")
        .hasMessageContaining("minTokens");
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  context:\n    estimateMargin: 1.5\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.context.estimateMargin");
  }

  @Test
  void theResponsesApiOfAnOpenAiKindServerIsTranslatedToChatUnlessSetToNative() {
    assertThat(LocalConfig.DEFAULTS.responsesApi()).isEqualTo(LocalConfig.ResponsesApi.CHAT);
    assertThat(loader.parse("test", "local:\n  kind: openai\n  responsesApi: native\n").local().responsesApi())
        .isEqualTo(LocalConfig.ResponsesApi.NATIVE);
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  responsesApi: responses\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.responsesApi")
        .hasMessageContaining("not one of chat, native");
  }
}
