package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResponsesConfigTest {
  private static GatewayConfig parse(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test", yaml);
  }

  @Test
  void theResponseStoreIsOnByDefaultWithOpenAisThirtyDays() {
    ResponsesConfig responses = parse("keys: []\n").responses();

    assertThat(responses.enabled()).isTrue();
    assertThat(responses.maxBytesPerTeam()).isEqualTo(DataSize.ofMebibytes(64));
    assertThat(responses.ttl()).isEqualTo(Duration.ofDays(30));
    assertThat(responses.maxChain()).isEqualTo(1000);
  }

  @Test
  void everyKeyIsReadAsWritten() {
    ResponsesConfig responses = parse("""
        responses:
          enabled: false
          maxBytesPerTeam: 8MiB
          ttl: 2d
          maxChain: 50
        """).responses();

    assertThat(responses.enabled()).isFalse();
    assertThat(responses.maxBytesPerTeam()).isEqualTo(DataSize.ofMebibytes(8));
    assertThat(responses.ttl()).isEqualTo(Duration.ofDays(2));
    assertThat(responses.maxChain()).isEqualTo(50);
  }

  @Test
  void nonsenseIsReportedByKey() {
    assertThatThrownBy(() -> parse("""
        responses:
          maxBytesPerTeam: 10B
          ttl: 0s
          maxChain: 0
          keepForever: true
        """)).hasMessageContaining("responses.maxBytesPerTeam").hasMessageContaining("responses.ttl")
        .hasMessageContaining("responses.maxChain").hasMessageContaining("keepForever");
  }
}
