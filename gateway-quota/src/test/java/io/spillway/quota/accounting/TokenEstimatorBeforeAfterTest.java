package io.spillway.quota.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.Golden;
import io.spillway.core.testing.PromptBodies;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Counting tool definitions from the parse (remembered by their structure) and keying each text once
 * per request changes no estimate: the estimator agrees with the estimator as it was before (at
 * a85f4a1, whose estimates are recorded in the golden file {@code golden/estimates-a85f4a1.json}) on
 * the bodies captured from real clients, the first time a body is seen and when its parts are
 * remembered.
 */
class TokenEstimatorBeforeAfterTest {
  private static final ObjectNode GOLDEN = Golden.read("estimates-a85f4a1.json");
  private final TokenEstimator estimator = new TokenEstimator(1024, 131_072);

  /** The bodies captured from real clients (not the benchmark's), as the client sent them for its route. */
  static Stream<Arguments> captured() {
    return PromptBodies.captured().stream()
        .filter(body -> !body.name().startsWith("bench/") && body.route() != Route.MESSAGES_COUNT_TOKENS)
        .map(body -> Arguments.of(body.name(), body.route(), Json.toBytes(body.body())));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedClientBodyIsEstimatedAsBeforeFirstAndRemembered(String name, Route route, byte[] bytes) throws IOException {
    JsonNode expected = golden(name);
    assertThat(Golden.digest(Json.parse(bytes))).as("the body is the one the golden file was recorded from")
        .isEqualTo(expected.get("body").asText());
    assertThat(expected.get("promptTokens").asLong()).isPositive();
    for (int turn = 0; turn < 3; turn++) {
      TokenEstimator.Estimate estimate = estimator.estimate(request(route, bytes));
      assertThat(estimate.promptTokens()).as("turn %d", turn).isEqualTo(expected.get("promptTokens").asLong());
      assertThat(estimate.maxOutputTokens()).isEqualTo(expected.get("maxOutputTokens").asLong());
    }
  }

  @Test
  void toolsFunctionsAndAResponseFormatAreCountedAsTheirJsonText() throws IOException {
    String body = """
        {"model":"gpt-4o","messages":[{"role":"user","content":"What is the weather in Paris, and in Lyon?"}],
         "tools":[{"type":"function","function":{"name":"weather","description":"The weather in a city, now",
           "parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},
           "required":["city"]},"strict":true}}],
         "functions":[{"name":"legacy","parameters":{"type":"object","properties":{"n":{"type":"number","minimum":1.5}}}}],
         "response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object"}}}}
        """;
    // The same definitions spelled differently (spaces, escapes) are the same JSON text once read.
    String respelled = body.replace("\"weather\",", "\"weath\\u0065r\" ,").replace("[\"c\",\"f\"]", "[ \"c\" , \"f\" ]");
    JsonNode expected = GOLDEN.get("toolDefinitions");
    for (String spelling : List.of(body, respelled, body)) {
      assertThat(estimator.estimate(request(Route.CHAT_COMPLETIONS, spelling.getBytes())).promptTokens())
          .as(spelling).isEqualTo(expected.get(spelling == respelled ? 1 : 0).asLong());
    }
    // Reordered definitions are another JSON text, and counted as such.
    String reordered = body.replace("\"required\":[\"city\"]},\"strict\":true", "\"required\":[\"city\"]},\"strict\":false");
    assertThat(estimator.estimate(request(Route.CHAT_COMPLETIONS, reordered.getBytes())).promptTokens())
        .isEqualTo(expected.get(2).asLong());
  }

  private static JsonNode golden(String name) {
    for (JsonNode entry : GOLDEN.get("captured")) {
      if (entry.get("name").asText().equals(name)) {
        return entry;
      }
    }
    throw new AssertionError("no golden estimate for " + name);
  }

  private static GatewayRequest request(Route route, byte[] bytes) throws IOException {
    return GatewayRequest.create("req", route, Headers.of("content-type", "application/json"),
        (ObjectNode) Json.parse(bytes), bytes, Instant.EPOCH);
  }
}
