package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The front end's time limits: documented defaults, and a limit of zero is a mistake, not "off". */
class FrontEndLimitsConfigTest {
  private final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  @Test
  void frontEndTimeLimitsHaveTheirDocumentedDefaults() {
    ServerConfig server = loader.parse("c.yaml", "").server();
    assertThat(server.requestReadTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(server.idleTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(server.streamTimeLimit()).isEqualTo(Duration.ofMinutes(30));
    assertThat(loader.parse("c.yaml", "server:\n  requestReadTimeout: 5s").server().requestReadTimeout())
        .isEqualTo(Duration.ofSeconds(5));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"requestReadTimeout", "idleTimeout", "streamTimeLimit"})
  void aZeroTimeLimitIsRejectedNamingTheKey(String key) {
    assertThatThrownBy(() -> loader.parse("c.yaml", "server:\n  " + key + ": 0s"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("server." + key);
  }
}
