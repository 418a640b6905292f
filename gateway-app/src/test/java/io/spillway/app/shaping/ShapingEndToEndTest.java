package io.spillway.app.shaping;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.core.testing.SampleSources;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Shaping through the real gateway: the OpenAI wire format in, WireMock's record of what reached the
 * cloud out.
 */
class ShapingEndToEndTest {
  private static final String FILE = SampleSources.pythonModuleWithTraceback(2000);

  private static String chat(String model, String extra) {
    return "{\"model\":\"" + model + "\"," + extra + "\"messages\":[{\"role\":\"user\",\"content\":"
        + OpenAiStubs.quote("My job crashes, here is ledger.py and the error:\n```python\n" + FILE + "```") + "}]}";
  }

  private static JsonNode lastUpstreamBody(GatewayHarness h) throws IOException {
    List<LoggedRequest> requests = h.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
    assertThat(requests).isNotEmpty();
    return Json.parse(requests.get(requests.size() - 1).getBodyAsString());
  }

  @Test
  void bronzeRequestWithAHugeFileIsTrimmedAndTightenedUnderDegradeAlwaysWhileGoldIsUntouched() throws IOException {
    try (GatewayHarness h = GatewayHarness.start("shaping:\n  degrade: always\n")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("Divide only when non-empty.")));
      String request = chat("gpt-4o", "\"temperature\":0.8,\"max_tokens\":1000,");
      assertThat(FILE.split("\n")).hasSize(2000);

      HttpResponse<String> bronze = h.post("/v1/chat/completions", GatewayHarness.BRONZE_KEY, request);

      assertThat(bronze.statusCode()).isEqualTo(200);
      assertThat(bronze.headers().firstValue("x-spillway-degraded")).hasValue("trimmed,temperature,max_tokens");
      assertThat(bronze.body()).contains("Divide only when non-empty.");
      JsonNode upstream = lastUpstreamBody(h);
      String message = upstream.at("/messages/0/content").asText();
      assertThat(message.split("\n").length).as("a few hundred lines").isBetween(60, 400);
      assertThat(message).contains(SampleSources.FAILING_FUNCTION, "... (context trimmed)");
      assertThat(message).contains(SampleSources.traceback(FILE));
      assertThat(message).startsWith("My job crashes").endsWith("```");
      assertThat(upstream.get("temperature").asDouble()).isEqualTo(0.3);
      assertThat(upstream.get("max_tokens").asInt()).isEqualTo(700);

      HttpResponse<String> gold = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, request);

      assertThat(gold.statusCode()).isEqualTo(200);
      assertThat(gold.headers().firstValue("x-spillway-degraded")).isEmpty();
      List<LoggedRequest> requests = h.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(requests.get(requests.size() - 1).getBodyAsString()).isEqualTo(request);
    }
  }

  @Test
  void nothingChangesForAnyTierWithoutPressure() throws IOException {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      String request = chat("gpt-4o", "\"temperature\":0.8,\"max_tokens\":1000,\"stop\":\"\\n\\n\",");

      for (String key : List.of(GatewayHarness.BRONZE_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.GOLD_KEY)) {
        HttpResponse<String> response = h.post("/v1/chat/completions", key, request);
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("x-spillway-degraded")).isEmpty();
        List<LoggedRequest> requests = h.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
        assertThat(requests.get(requests.size() - 1).getBodyAsString()).isEqualTo(request);
      }
    }
  }

  @Test
  void aStreamedAnswerIsCutAtTheRewrittenStopSequenceForTheOpenAiSdk() throws IOException {
    try (GatewayHarness h = GatewayHarness.start("shaping:\n  degrade: always\n")) {
      h.cloud.stubFor(post("/v1/chat/completions")
          .willReturn(OpenAiStubs.chatStream(true, "def add(a, b):\n", "    return a + b\n", "\n", "\ndef sub(a, b):")));
      OpenAIClient client = h.openAi(GatewayHarness.SILVER_KEY);

      String text;
      List<String> finishes;
      try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(
          ChatCompletionCreateParams.builder().model("gpt-4o").addUserMessage("Write add()").stop("\n\n").build())) {
        List<ChatCompletionChunk> chunks = stream.stream().toList();
        text = chunks.stream().flatMap(c -> c.choices().stream())
            .map(choice -> choice.delta().content().orElse("")).collect(Collectors.joining());
        finishes = chunks.stream().flatMap(c -> c.choices().stream())
            .flatMap(choice -> choice.finishReason().stream()).map(Object::toString).toList();
      }

      assertThat(text).isEqualTo("def add(a, b):\n    return a + b");
      assertThat(finishes).containsExactly("stop");
      JsonNode upstream = lastUpstreamBody(h);
      assertThat(upstream.has("stop")).isFalse();
      assertThat(upstream.get("max_tokens").asInt()).isEqualTo(512);
    }
  }

  @Test
  void anOpenBreakerTakesBronzeDownTheLadderToLocalButNotGold() throws IOException {
    try (GatewayHarness h = GatewayHarness.start("local:\n  kind: openai\n")) {
      h.ollama.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("Served locally")));
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("Served by the cloud")));
      HttpResponse<String> forced = h.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(h.url("/admin/breaker")))
          .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).header("Content-Type", "application/json")
          .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"state\":\"open\"}")).build());
      assertThat(forced.statusCode()).isEqualTo(200);
      String request = "{\"model\":\"gpt-4o\",\"temperature\":0.9,\"max_tokens\":100,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

      HttpResponse<String> bronze = h.post("/v1/chat/completions", GatewayHarness.BRONZE_KEY, request);

      assertThat(bronze.headers().firstValue("x-spillway-degraded")).hasValue("temperature,max_tokens,local");
      assertThat(bronze.headers().firstValue("x-spillway-backend")).hasValue("local");
      JsonNode local = Json.parse(h.ollama.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).get(0)
          .getBodyAsString());
      assertThat(local.get("temperature").asDouble()).isEqualTo(0.3);

      HttpResponse<String> gold = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, request);
      assertThat(gold.headers().firstValue("x-spillway-degraded")).isEmpty();
    }
  }

  @Test
  void aBronzePoolPastItsSoftBandSendsSingleLineCompletionsToTheSmallerModel() throws IOException {
    // Bronze's pool is 30 % of 10,000 tokens: an answer of 2,900 tokens takes it past 95 %.
    try (GatewayHarness h = GatewayHarness.start("quota: {monthlyTokens: 10000}\n")) {
      h.cloud.stubFor(post("/v1/chat/completions")
          .willReturn(OpenAiStubs.json(200, OpenAiStubs.chatCompletionBody("a long essay", 100, 2800))));
      String request = "{\"model\":\"gpt-4o\",\"max_tokens\":16,\"stop\":[\"\\n\"],"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"total = \"}]}";

      HttpResponse<String> first = h.post("/v1/chat/completions", GatewayHarness.BRONZE_KEY, request);
      assertThat(first.headers().firstValue("x-spillway-degraded")).isEmpty();

      HttpResponse<String> second = h.post("/v1/chat/completions", GatewayHarness.BRONZE_KEY, request);

      assertThat(second.statusCode()).isEqualTo(200);
      assertThat(second.headers().firstValue("x-spillway-degraded")).hasValue("max_tokens,model");
      JsonNode upstream = lastUpstreamBody(h);
      assertThat(upstream.get("model").asText()).isEqualTo("gpt-4o-mini");
      assertThat(upstream.get("max_tokens").asInt()).isEqualTo(11);

      HttpResponse<String> silver = h.post("/v1/chat/completions", GatewayHarness.SILVER_KEY, request);
      assertThat(silver.headers().firstValue("x-spillway-degraded")).as("silver's pool is fine").isEmpty();
    }
  }

  @Test
  void lowSignalRequestsAreToldSo() {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      String stubs = "class Api {\n" + "  m() {\n    // TODO: implement\n  }\n".repeat(6) + "}\n";

      HttpResponse<String> response = h.post("/v1/chat/completions", GatewayHarness.SILVER_KEY,
          "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":" + OpenAiStubs.quote(stubs) + "}]}");

      assertThat(response.headers().firstValue("x-spillway-signal")).hasValue("low");
    }
  }

  @Test
  void theRiskIndexIsInTheAdminStatus() throws IOException {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      for (int i = 0; i < 3; i++) {
        h.post("/v1/chat/completions", GatewayHarness.SILVER_KEY,
            "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
      }

      HttpResponse<String> status = h.get("/admin/status", GatewayHarness.ADMIN_TOKEN);

      assertThat(status.statusCode()).isEqualTo(200);
      JsonNode risk = Json.parse(status.body()).get("risk");
      assertThat(risk.get("threshold").asDouble()).isEqualTo(0.65);
      assertThat(risk.at("/requests/recentErrors").asLong()).isEqualTo(3);
      assertThat(risk.has("index")).isTrue();
    }
  }
}
