package io.spillway.core.config;

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
  void theResponsesApiOfAnOpenAiKindServerIsTranslatedToChatUnlessSetToNative() {
    assertThat(LocalConfig.DEFAULTS.responsesApi()).isEqualTo("chat");
    assertThat(loader.parse("test", "local:\n  kind: openai\n  responsesApi: native\n").local().responsesApi())
        .isEqualTo("native");
    assertThatThrownBy(() -> loader.parse("gateway.yaml", "local:\n  responsesApi: responses\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("local.responsesApi")
        .hasMessageContaining("not one of chat, native");
  }
}
