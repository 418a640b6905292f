package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CapacitySignalTest {
  @ParameterizedTest(name = "{0} {1} retry-after={2} -> {3}")
  @CsvSource(delimiter = '|', textBlock = """
      503 | Selected model is at capacity. Please try a different model. |      | true
      503 | The server is overloaded or not ready yet.                    |      | true
      429 | The engine is currently overloaded, please try again later    |      | true
      503 | upstream connect error                                        | 30   | true
      503 | upstream connect error                                        |      | false
      429 | You exceeded your current quota, please check your plan       | 20   | false
      429 | Rate limit reached for gpt-4o on requests per min (RPM)       | 1    | false
      500 | The model is at capacity                                      |      | false
      200 | capacity planning is fun                                      |      | false
      """)
  void simpleSignalFollowsTheDesignRule(int status, String message, String retryAfter, boolean capacity) {
    Headers headers = retryAfter == null ? Headers.of("content-type", "application/json")
        : Headers.of("content-type", "application/json", "retry-after", retryAfter);
    byte[] body = ("{\"error\":{\"message\":\"" + message + "\",\"type\":\"server_error\"}}").getBytes(StandardCharsets.UTF_8);

    assertThat(CapacitySignal.SIMPLE.isCapacity(null, GatewayResponse.buffered(status, headers, body))).isEqualTo(capacity);
  }
}
