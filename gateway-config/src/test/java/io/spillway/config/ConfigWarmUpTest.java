package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The start-up warm-up of the config binder binds a real config and leaves no trace in later loads. */
class ConfigWarmUpTest {
  @Test
  void theWarmUpSampleIsAValidConfigSoTheWholeBinderIsBuilt() {
    GatewayConfig sample = new ConfigLoader(name -> null).parse("warm-up", ConfigLoader.WARM_UP_SAMPLE);

    assertThat(sample.keys()).hasSize(1);
    assertThat(sample.cloud().apiKey()).isEqualTo("sk-warm-up");
    assertThat(sample.server().port()).isZero();
  }

  @Test
  void aLoadAfterAWarmUpOnAnotherThreadStillReportsEveryProblemOfItsOwn() throws InterruptedException {
    Thread warmUp = Thread.ofPlatform().start(ConfigLoader::warmUp);
    warmUp.join();
    ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

    assertThatThrownBy(() -> loader.parse("bad.yaml", """
        server: { port: 0, idleTimeout: soon }
        failover: { localFor: five minutes }
        """))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("bad.yaml")
        .hasMessageContaining("server.idleTimeout")
        .hasMessageContaining("failover.localFor")
        .hasMessageNotContaining("warm-up");
  }
}
