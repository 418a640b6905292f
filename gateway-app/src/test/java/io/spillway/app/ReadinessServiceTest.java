package io.spillway.app;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.core.tokens.TokenCounter;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code /readyz} and {@code /admin/status} show the local backend's readiness. */
class ReadinessServiceTest {
  @Test
  void readyzShowsAMissingLocalModelWithItsFixAndStaysReadyWithACloud() throws Exception {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.ollama.stubFor(get("/api/version").willReturn(OpenAiStubs.json(200, "{\"version\":\"0.12.6\"}")));
      h.ollama.stubFor(get("/api/tags").willReturn(OpenAiStubs.json(200,
          "{\"models\":[{\"name\":\"qwen2.5-coder:7b\",\"model\":\"qwen2.5-coder:7b\"}]}")));
      h.gateway().local().checkNow();

      HttpResponse<String> readyz = h.get("/readyz", null);

      assertThat(readyz.statusCode()).isEqualTo(200);
      JsonNode body = Json.parse(readyz.body());
      assertThat(body.path("status").asText()).isEqualTo("ready");
      assertThat(body.path("cloud").path("configured").asBoolean()).isTrue();
      assertThat(body.path("local").path("version").asText()).isEqualTo("0.12.6");
      assertThat(body.path("local").path("missing").toString())
          .isEqualTo("[{\"model\":\"llama3.2:3b\",\"fix\":\"ollama pull llama3.2:3b\"}]");
      assertThat(body.path("local").has("baseUrl")).as("/readyz needs no token").isFalse();

      HttpResponse<String> status = h.get("/admin/status", GatewayHarness.ADMIN_TOKEN);
      assertThat(status.statusCode()).isEqualTo(200);
      assertThat(Json.parse(status.body()).path("local").path("baseUrl").asText()).isEqualTo(h.ollama.baseUrl());
      assertThat(h.get("/admin/status", null).statusCode()).isEqualTo(401);
    }
  }

  /**
   * Readiness does not wait for the tokenizer's vocabulary (it loads in the background once the
   * listener is up); {@code tokenizer.loaded} shows whether it has, and a chat request, which counts
   * tokens, is answered with it loaded.
   */
  @Test
  void readyzDoesNotWaitForTheTokenizerAndTheFirstChatRequestIsAnsweredWithItLoaded() throws Exception {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.cloud.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post("/v1/chat/completions")
          .willReturn(OpenAiStubs.chatCompletion("hello")));

      HttpResponse<String> readyz = h.get("/readyz", null);
      assertThat(readyz.statusCode()).isEqualTo(200);
      assertThat(Json.parse(readyz.body()).path("tokenizer").path("loaded").isBoolean()).isTrue();

      HttpResponse<String> chat = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o-mini", "count my tokens", false));
      assertThat(chat.statusCode()).isEqualTo(200);
      assertThat(TokenCounter.vocabularyLoaded()).isTrue();
      JsonNode after = Json.parse(h.get("/readyz", null).body());
      assertThat(after.path("status").asText()).isEqualTo("ready");
      assertThat(after.path("tokenizer").path("loaded").asBoolean()).isTrue();
    }
  }

  @Test
  void readyzIs503WithReasonsWhenNeitherCloudNorLocalCanServe() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    try (GatewayHarness h = GatewayHarness.start("""
        cloud:
          baseUrl: https://api.openai.com/v1
          apiKey: ""
        local:
          baseUrl: http://127.0.0.1:%d
        """.formatted(closedPort))) {
      await().atMost(Duration.ofSeconds(20)).until(() -> h.gateway().local().readiness().checked());

      HttpResponse<String> readyz = h.get("/readyz", null);

      assertThat(readyz.statusCode()).isEqualTo(503);
      assertThat(readyz.headers().firstValue("retry-after")).isPresent();
      JsonNode body = Json.parse(readyz.body());
      assertThat(body.path("status").asText()).isEqualTo("not_ready");
      assertThat(body.path("local").path("reachable").asBoolean()).isFalse();
      assertThat(body.path("reasons").toString()).contains("cloud.apiKey").contains("ollama serve");
    }
  }
}
