package io.spillway.quota.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Counting tool definitions from the parse (remembered by their structure) and keying each text once
 * per request changes no estimate: the estimator agrees with the estimator as it was before
 * (TokenEstimatorBefore, a verbatim copy) on the bodies captured from real clients, the first time a
 * body is seen and when its parts are remembered.
 */
class TokenEstimatorBeforeAfterTest {
  private final TokenEstimator estimator = new TokenEstimator(1024, 131_072);
  private final TokenEstimatorBefore before = new TokenEstimatorBefore(1024, 131_072);

  static Stream<Arguments> captured() throws IOException {
    List<Arguments> out = new ArrayList<>();
    Path local = Path.of("../gateway-local-backend/src/test/resources/fixtures");
    for (String client : List.of("codex", "ai-sdk", "openai-agents")) {
      try (Stream<Path> files = Files.list(local.resolve(client))) {
        for (Path file : files.sorted().toList()) {
          String name = file.getFileName().toString();
          if (name.endsWith(".json") && !name.endsWith(".ollama.json") && !name.equals("request-headers.json")) {
            out.add(Arguments.of(client + "/" + name, name.endsWith(".chat.json") ? Route.CHAT_COMPLETIONS : Route.RESPONSES,
                Files.readAllBytes(file)));
          }
        }
      }
    }
    out.add(Arguments.of("claude-code/healthy-turn.json", Route.MESSAGES,
        Files.readAllBytes(Path.of("../gateway-app/src/test/resources/fixtures/claude-code/healthy-turn.json"))));
    return out.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedClientBodyIsEstimatedAsBeforeFirstAndRemembered(String name, Route route, byte[] bytes) throws IOException {
    TokenEstimatorBefore.Estimate expected = before.estimate(request(route, bytes));
    assertThat(expected.promptTokens()).isPositive();
    for (int turn = 0; turn < 3; turn++) {
      TokenEstimator.Estimate estimate = estimator.estimate(request(route, bytes));
      assertThat(estimate.promptTokens()).as("turn %d", turn).isEqualTo(expected.promptTokens());
      assertThat(estimate.maxOutputTokens()).isEqualTo(expected.maxOutputTokens());
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
    for (String spelling : List.of(body, respelled, body)) {
      byte[] bytes = spelling.getBytes();
      assertThat(estimator.estimate(request(Route.CHAT_COMPLETIONS, bytes)).promptTokens())
          .isEqualTo(before.estimate(request(Route.CHAT_COMPLETIONS, bytes)).promptTokens());
    }
    // Reordered definitions are another JSON text, and counted as such.
    String reordered = body.replace("\"required\":[\"city\"]},\"strict\":true", "\"required\":[\"city\"]},\"strict\":false");
    assertThat(estimator.estimate(request(Route.CHAT_COMPLETIONS, reordered.getBytes())).promptTokens())
        .isEqualTo(before.estimate(request(Route.CHAT_COMPLETIONS, reordered.getBytes())).promptTokens());
  }

  private static GatewayRequest request(Route route, byte[] bytes) throws IOException {
    return GatewayRequest.create("req", route, Headers.of("content-type", "application/json"),
        (ObjectNode) Json.parse(bytes), bytes, Instant.EPOCH);
  }
}
