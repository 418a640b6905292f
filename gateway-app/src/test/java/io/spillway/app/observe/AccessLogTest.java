package io.spillway.app.observe;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AccessLogTest {
  static final String PROMPT = "Refactor the PaymentLedgerReconciler please";
  static final String COMPLETION = "Here is the refactored ZephyrCompletionText";

  GatewayHarness harness;
  LogCapture logs;

  @BeforeEach
  void capture() {
    logs = new LogCapture();
  }

  @AfterEach
  void stop() {
    if (harness != null) {
      harness.close();
    }
    logs.close();
  }

  private static JsonNode parse(String line) {
    try {
      return Json.parse(line);
    } catch (IOException e) {
      throw new AssertionError("access log line is not JSON: " + line, e);
    }
  }

  private JsonNode onlyAccessLine() {
    await().atMost(Duration.ofSeconds(5)).until(() -> logs.accessLines().size() == 1);
    return parse(logs.accessLines().get(0));
  }

  @Test
  void oneJsonLinePerRequestTellsItsStory() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(COMPLETION)));

    HttpResponse<String> response = harness.post("/v1/chat/completions", GatewayHarness.SILVER_KEY,
        GatewayHarness.chatBody("gpt-4o", PROMPT, false), "x-request-id", "client-req-42");
    assertThat(response.statusCode()).isEqualTo(200);

    JsonNode line = onlyAccessLine();
    assertThat(line.get("requestId").asText()).isEqualTo("client-req-42");
    assertThat(line.get("route").asText()).isEqualTo("chat");
    assertThat(line.get("team").asText()).isEqualTo("web");
    assertThat(line.get("tier").asText()).isEqualTo("silver");
    assertThat(line.get("keyId").asText()).startsWith("cfg_").hasSize(20); // keyed: see AccessLogHardeningTest
    assertThat(line.get("backend").asText()).isEqualTo("cloud");
    assertThat(line.get("model").asText()).isEqualTo("gpt-4o");
    assertThat(line.get("status").asInt()).isEqualTo(200);
    assertThat(line.get("outcome").asText()).isEqualTo("success");
    assertThat(line.get("latencyMs").isNumber()).isTrue();
    assertThat(line.get("upstreamMs").asDouble()).isLessThanOrEqualTo(line.get("latencyMs").asDouble());
    assertThat(line.get("promptTokens").asInt()).isEqualTo(12);
    assertThat(line.get("completionTokens").asInt()).isEqualTo(7);
    assertThat(line.get("totalTokens").asInt()).isEqualTo(19);
    assertThat(line.get("degraded").isArray()).isTrue();
    assertThat(line.get("cache").asText()).as("the cache stage's x-spillway-cache")
        .isEqualTo(response.headers().firstValue("x-spillway-cache").orElse("none"));
    assertThat(line.get("ts").asText()).isEqualTo(harness.clock.instant().toString());
  }

  @Test
  void keysPromptsAndCompletionsAreNeverLoggedByDefault() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(COMPLETION)));

    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", PROMPT, false));
    harness.post("/v1/chat/completions", "sk-wrong-key-never-logged", GatewayHarness.chatBody("gpt-4o", PROMPT, false));
    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, "{\"model\":\"gpt-4o\",\"messages\":\"" + PROMPT + "\"}");

    await().atMost(Duration.ofSeconds(5)).until(() -> logs.accessLines().size() == 3);
    List<String> everything = logs.lines();
    assertThat(everything).isNotEmpty();
    for (String line : everything) {
      assertThat(line).doesNotContain(GatewayHarness.GOLD_KEY, "sk-wrong-key-never-logged", GatewayHarness.CLOUD_KEY,
          "PaymentLedgerReconciler", "ZephyrCompletionText");
    }
    JsonNode rejected = parse(logs.accessLines().get(1));
    assertThat(rejected.get("status").asInt()).isEqualTo(401);
    assertThat(rejected.get("team").isNull()).isTrue();
    assertThat(rejected.get("error").asText()).isEqualTo("invalid_api_key");
    assertThat(parse(logs.accessLines().get(2)).get("status").asInt()).isEqualTo(400);
  }

  @Test
  void payloadLoggingShowsPromptsAndCompletionsButStillNoKeys() {
    harness = GatewayHarness.start("logging:\n  payloads: true");
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(COMPLETION)));

    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", PROMPT, false));

    JsonNode line = onlyAccessLine();
    assertThat(line.get("prompt").get("messages").get(0).get("content").asText()).isEqualTo(PROMPT);
    assertThat(line.get("completion").asText()).isEqualTo(COMPLETION);
    assertThat(String.join("\n", logs.lines())).doesNotContain(GatewayHarness.GOLD_KEY, GatewayHarness.CLOUD_KEY);
  }

  @Test
  void aStreamIsLoggedOnceWhenItEndsWithItsUsageAndFirstByteTime() {
    harness = GatewayHarness.start("logging:\n  payloads: true");
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "Zephyr", "Stream")));

    HttpResponse<String> response = harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
        GatewayHarness.chatBody("gpt-4o", PROMPT, true), "x-request-id", "stream-9");
    assertThat(response.body()).contains("[DONE]");

    JsonNode line = onlyAccessLine();
    assertThat(line.get("stream").asBoolean()).isTrue();
    assertThat(line.get("status").asInt()).isEqualTo(200);
    assertThat(line.get("outcome").asText()).isEqualTo("success");
    assertThat(line.get("ttfbMs").isNumber()).isTrue();
    assertThat(line.get("completionTokens").asInt()).isEqualTo(2);
    assertThat(line.get("completion").asText()).isEqualTo("ZephyrStream");
    assertThat(logs.events()).filteredOn(e -> e.getLoggerName().equals(AccessLog.LOGGER))
        .singleElement().satisfies(e -> assertThat(e.getMDCPropertyMap()).containsEntry("requestId", "stream-9"));
  }

  @Test
  void everyLogLineOfARequestCarriesItsRequestId() {
    harness = GatewayHarness.start("cloud:\n  baseUrl: http://127.0.0.1:1/v1\n  connectTimeout: 1s");

    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", PROMPT, false),
        "x-request-id", "trace-me-7");

    JsonNode line = onlyAccessLine();
    assertThat(line.get("status").asInt()).isEqualTo(502);
    assertThat(line.get("error").asText()).isEqualTo("upstream_unreachable");
    assertThat(logs.events()).filteredOn(e -> e.getLoggerName().equals(AccessLog.LOGGER))
        .allSatisfy(e -> assertThat(e.getMDCPropertyMap()).containsEntry("requestId", "trace-me-7"));
  }

  @Test
  void textFormatWhenJsonIsTurnedOff() {
    harness = GatewayHarness.start("logging:\n  json: false");
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(COMPLETION)));

    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", PROMPT, false),
        "x-request-id", "plain-1");

    await().atMost(Duration.ofSeconds(5)).until(() -> logs.accessLines().size() == 1);
    assertThat(logs.accessLines().get(0))
        .startsWith("requestId=plain-1 route=chat team=release tier=gold backend=cloud model=gpt-4o status=200")
        .contains("tokens=19")
        .doesNotContain("PaymentLedgerReconciler", "ZephyrCompletionText");
  }
}
