package io.spillway.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import org.junit.jupiter.api.Test;

/** What the start-up warm-up does for which config. */
class StartupWarmerTest {
  private static GatewayConfig config(String yaml) {
    return new ConfigLoader(name -> null).parse("test", yaml);
  }

  @Test
  void aPlainHttpCloudWithoutLocalServersNeedsNoTrustStoreBeforeTheFirstRequest() {
    assertThat(StartupWarmer.usesTls(config("""
        cloud: { baseUrl: "http://127.0.0.1:9000/v1", apiKey: sk-test }
        local: { enabled: false }
        """))).isFalse();
  }

  @Test
  void anHttpsCloudRouteOrTheLocalBackendWarmTheTrustStore() {
    assertThat(StartupWarmer.usesTls(config("""
        cloud: { baseUrl: "https://api.openai.com/v1", apiKey: sk-test }
        local: { enabled: false }
        """))).isTrue();
    assertThat(StartupWarmer.usesTls(config("""
        cloud:
          routes:
            - { name: plain, kind: openai, baseUrl: "http://127.0.0.1:9000/v1", apiKey: sk-a }
            - { name: tls, kind: openai, baseUrl: "https://api.openai.com/v1", apiKey: sk-b }
        local: { enabled: false }
        """))).isTrue();
    assertThat(StartupWarmer.usesTls(config("""
        cloud: { baseUrl: "http://127.0.0.1:9000/v1", apiKey: sk-test }
        local: { enabled: true, baseUrl: "http://127.0.0.1:11434" }
        """))).isTrue();
  }

  @Test
  void theCacheWarmUpBuildsACacheWithTheResponseCachesFeatures() {
    assertThatCode(StartupWarmer::warmCache).doesNotThrowAnyException();
  }
}
