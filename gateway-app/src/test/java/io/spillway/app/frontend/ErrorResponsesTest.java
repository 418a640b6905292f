package io.spillway.app.frontend;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every error a client can meet is an OpenAI error body with the matching status. */
class ErrorResponsesTest {
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start("cloud:\n  timeout: 1s\nserver:\n  maxRequestSize: 64KiB\n  maxHeaderSize: 8KiB");
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void reset() {
    harness.cloud.resetAll();
  }

  static JsonNode error(HttpResponse<String> response) throws IOException {
    assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
    assertThat(response.headers().firstValue("x-request-id")).isPresent();
    JsonNode error = Json.parse(response.body()).get("error");
    assertThat(error).isNotNull();
    assertThat(error.has("message") && error.has("type") && error.has("param") && error.has("code")).isTrue();
    return error;
  }

  @Test
  void missingKeyGets401InvalidApiKey() throws IOException {
    HttpResponse<String> response = harness.post("/v1/chat/completions", null, chatBody("gpt-4o", "hi", false));
    assertThat(response.statusCode()).isEqualTo(401);
    assertThat(error(response).get("code").asText()).isEqualTo("invalid_api_key");
  }

  @Test
  void wrongKeyGets401AndIsNotEchoed() throws IOException {
    HttpResponse<String> response = harness.post("/v1/chat/completions", "sk-wrong-key-123", chatBody("gpt-4o", "hi", false));
    assertThat(response.statusCode()).isEqualTo(401);
    assertThat(error(response).get("code").asText()).isEqualTo("invalid_api_key");
    assertThat(response.body()).doesNotContain("sk-wrong-key-123");
  }

  @Test
  void malformedJsonGets400() throws IOException {
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, "{\"model\": \"gpt-4o\", ");
    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(error(response).get("type").asText()).isEqualTo("invalid_request_error");
  }

  @Test
  void missingModelGets400NamingTheParam() throws IOException {
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, "{\"messages\":[]}");
    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(error(response).get("param").asText()).isEqualTo("model");
  }

  @Test
  void unknownPathGets404() throws IOException {
    HttpResponse<String> response = harness.post("/v1/embeddingz", GOLD_KEY, "{}");
    assertThat(response.statusCode()).isEqualTo(404);
    error(response);
  }

  @Test
  void wrongMethodGets405() throws IOException {
    HttpResponse<String> response = harness.get("/v1/chat/completions", GOLD_KEY);
    assertThat(response.statusCode()).isEqualTo(405);
    assertThat(error(response).get("code").asText()).isEqualTo("method_not_allowed");
  }

  @Test
  void bodyOverTheLimitGets413() throws IOException {
    String huge = chatBody("gpt-4o", "x".repeat(100_000), false);
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, huge);
    assertThat(response.statusCode()).isEqualTo(413);
    assertThat(error(response).get("code").asText()).isEqualTo("request_too_large");
  }

  @Test
  void oversizedHeadersGet431() throws IOException {
    String raw = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(16_000) + "\r\n\r\n";
    String answer = rawExchange(raw);
    assertThat(answer).startsWith("HTTP/1.1 431");
    assertThat(answer).contains("\"error\"");
  }

  @Test
  void unreachableUpstreamGets502() throws IOException {
    try (GatewayHarness down = GatewayHarness.start("cloud:\n  baseUrl: http://127.0.0.1:1/v1")) {
      HttpResponse<String> response = down.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
      assertThat(response.statusCode()).isEqualTo(502);
      assertThat(error(response).get("code").asText()).isEqualTo("upstream_unreachable");
    }
  }

  @Test
  void upstreamTimeoutGets504() throws IOException {
    harness.cloud.stubFor(post("/v1/chat/completions")
        .willReturn(OpenAiStubs.chatCompletion("late").withFixedDelay(3_000)));
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
    assertThat(response.statusCode()).isEqualTo(504);
    assertThat(error(response).get("code").asText()).isEqualTo("upstream_timeout");
  }

  @Test
  void upstreamErrorsReachTheClientWithStatusBodyAndRetryAfter() throws IOException {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.rateLimited()));
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
    assertThat(response.statusCode()).isEqualTo(429);
    assertThat(response.headers().firstValue("retry-after")).hasValue("1");
    assertThat(error(response).get("code").asText()).isEqualTo("rate_limit_exceeded");
  }

  @Test
  void upstreamModelNotFoundPassesThrough() throws IOException {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.invalidModel()));
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-9", "hi", false));
    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(error(response).get("code").asText()).isEqualTo("model_not_found");
  }

  @Test
  void wrongContentTypeGets415() throws IOException {
    HttpResponse<String> response = harness.send(HttpRequest.newBuilder(URI.create(harness.url("/v1/chat/completions")))
        .header("Authorization", "Bearer " + GOLD_KEY)
        .header("Content-Type", "text/plain")
        .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "hi", false))).build());
    assertThat(response.statusCode()).isEqualTo(415);
    error(response);
  }

  @Test
  void aBadRequestDoesNotDisturbTheNextOne() throws IOException {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "application/json").withBody(OpenAiStubs.chatCompletionBody("ok", 1, 1))));
    harness.post("/v1/chat/completions", GOLD_KEY, "[1,2,3]");
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
    assertThat(response.statusCode()).isEqualTo(200);
  }

  private static String rawExchange(String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", harness.gateway().port())) {
      socket.setSoTimeout(5_000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
