package io.spillway.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SelfReferenceTest {
  static GatewayConfig config(String serverHost, int port, String cloudBaseUrl) {
    String yaml = """
        server: { host: "%s", port: %d }
        cloud: { baseUrl: "%s" }
        local: { enabled: false }
        """.formatted(serverHost, port, cloudBaseUrl);
    return new ConfigLoader(Map.<String, String>of()::get).parse("test", yaml);
  }

  @ParameterizedTest(name = "{1} with the listener on {0}:8080 -> warned: {2}")
  @CsvSource({
      "0.0.0.0, http://127.0.0.1:8080/v1, true",
      "0.0.0.0, http://127.0.0.2:8080/v1, true",
      "0.0.0.0, http://localhost:8080/v1, true",
      "0.0.0.0, http://[::1]:8080/v1, true",
      "0.0.0.0, http://0.0.0.0:8080/v1, true",
      "10.0.0.5, http://10.0.0.5:8080/v1, true",
      "0.0.0.0, http://127.0.0.1:8081/v1, false",
      "0.0.0.0, http://127.0.0.1/v1, false",
      "0.0.0.0, https://api.openai.com/v1, false",
      "0.0.0.0, http://gateway.internal:8080/v1, false",
  })
  void warnsWhenTheCloudIsThisHostOnTheListenersPort(String serverHost, String cloudBaseUrl, boolean warned) {
    assertThat(SelfReference.warnings(config(serverHost, 8080, cloudBaseUrl), 8080)).hasSize(warned ? 1 : 0);
  }

  @ParameterizedTest
  @CsvSource({"https://localhost/v1, 443, true", "http://localhost/v1, 80, true", "https://localhost/v1, 80, false"})
  void defaultPortsCountByScheme(String cloudBaseUrl, int listenPort, boolean warned) {
    assertThat(SelfReference.warnings(config("0.0.0.0", listenPort, cloudBaseUrl), listenPort)).hasSize(warned ? 1 : 0);
  }

  @ParameterizedTest
  @CsvSource({"0", "-1"})
  void aPortChosenAtStartIsCheckedOnlyOnceBound(int port) {
    assertThat(SelfReference.warnings(config("0.0.0.0", 0, "http://127.0.0.1:0/v1"), port)).isEmpty();
  }
}
