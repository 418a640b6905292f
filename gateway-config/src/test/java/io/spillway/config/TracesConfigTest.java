package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TracesConfigTest {
  private final ConfigLoader loader = new ConfigLoader(Map.<String, String>of()::get);

  @Test
  void tracesAreOffUnlessAnEndpointIsSet() {
    TracesConfig traces = loader.parse("c.yaml", "").traces();
    assertThat(traces.enabled()).isFalse();
    assertThat(traces.sampleRatio()).isEqualTo(1.0);
    assertThat(traces.serviceName()).isEqualTo("spillway");
    assertThat(traces.exportInterval()).isEqualTo(Duration.ofSeconds(5));
  }

  @Test
  void anEndpointTurnsThemOn() {
    TracesConfig traces = loader.parse("c.yaml", """
        traces:
          endpoint: http://127.0.0.1:4318/v1/traces
          sampleRatio: 0.25
          serviceName: gw-eu
          exportInterval: 1s
        """).traces();
    assertThat(traces.enabled()).isTrue();
    assertThat(traces.endpoint()).isEqualTo("http://127.0.0.1:4318/v1/traces");
    assertThat(traces.sampleRatio()).isEqualTo(0.25);
    assertThat(traces.serviceName()).isEqualTo("gw-eu");
    assertThat(traces.exportInterval()).isEqualTo(Duration.ofSeconds(1));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "sampleRatio: 1.5 | traces.sampleRatio",
      "sampleRatio: -0.1 | traces.sampleRatio",
      "endpoint: 'grpc://collector:4317' | traces.endpoint",
      "endpoint: 'collector:4318' | traces.endpoint",
      "serviceName: ' ' | traces.serviceName",
      "exportInterval: 0s | traces.exportInterval"})
  void impossibleValuesAreRejectedNamingTheKey(String line, String key) {
    assertThatThrownBy(() -> loader.parse("gw.yaml", "traces:\n  " + line + "\n"))
        .isInstanceOf(ConfigException.class).hasMessageContaining(key);
  }
}
