package io.spillway.app.anthropic;

import static io.spillway.app.anthropic.MessagesAnswers.eventNames;
import static io.spillway.app.anthropic.MessagesAnswers.text;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.anthropic.AnthropicStubs.parse;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Anthropic's Messages API over HTTP/2 with prior knowledge (h2c), as an HTTP/2 client sends it:
 * every tier, buffered and streamed, from the Anthropic route and from the local model, reads
 * exactly as over HTTP/1.1 ({@code MessagesApiTest}); a Messages error keeps Anthropic's shape; and
 * several Messages streams share one connection.
 */
class MessagesOverHttp2Test {
  private static final MediaType JSON = MediaType.get("application/json");
  private static final String MODEL = "claude-sonnet-4-5";
  private static final String VERSION = "2023-06-01";

  @RegisterExtension
  final ClaudeRouteGateway gw = ClaudeRouteGateway.claudeOnly();

  private OkHttpClient client;

  @BeforeEach
  void http2Client() {
    AnthropicStubs.ollamaReady(gw.h.ollama);
    client = new OkHttpClient.Builder()
        .protocols(List.of(Protocol.H2_PRIOR_KNOWLEDGE))
        .readTimeout(Duration.ofSeconds(20))
        .build();
  }

  @AfterEach
  void closeClient() {
    client.dispatcher().executorService().shutdown();
    client.connectionPool().evictAll();
  }

  @ParameterizedTest(name = "{0}, stream {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void theAnthropicRouteAnswersAnHttp2ClientOnEveryTier(String key, boolean stream) throws IOException {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(stream
        ? AnthropicStubs.messageStream(MODEL, "Hello over h2c.") : AnthropicStubs.message(MODEL, "Hello over h2c.")));

    try (Response answer = client.newCall(messages(key, stream)).execute()) {
      String body = answer.body().string();
      assertThat(answer.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(answer.code()).as(body).isEqualTo(200);
      assertThat(answer.header("x-spillway-backend")).isEqualTo("cloud");
      assertThat(answer.header("content-type")).startsWith(stream ? "text/event-stream" : "application/json");
      assertThat(text(body)).isEqualTo("Hello over h2c.");
      if (stream) {
        assertThat(eventNames(body)).startsWith("message_start").endsWith("message_stop");
      }
    }
    gw.anthropic.verify(1, postRequestedFor(urlEqualTo("/v1/messages"))
        .withHeader("x-api-key", equalTo(ClaudeRouteGateway.ANTHROPIC_KEY))
        .withHeader("anthropic-version", equalTo(VERSION))
        .withoutHeader("x-http2-stream-id"));
  }

  @ParameterizedTest(name = "{0}, stream {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void theLocalModelAnswersAnHttp2ClientInAnthropicsShapeOnEveryTier(String key, boolean stream) throws IOException {
    ClaudeRouteGateway.forceBreakerOpen(gw.h);
    AnthropicStubs.ollamaChat(gw.h.ollama, 5, null, AnthropicStubs.textLines("Served locally over h2c."));

    try (Response answer = client.newCall(messages(key, stream)).execute()) {
      String body = answer.body().string();
      assertThat(answer.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(answer.code()).as(body).isEqualTo(200);
      assertThat(answer.header("x-spillway-backend")).isEqualTo("local");
      assertThat(text(body)).isEqualTo("Served locally over h2c.");
      if (stream) {
        List<String> names = eventNames(body);
        assertThat(names).startsWith("message_start").contains("content_block_delta", "message_delta")
            .endsWith("message_stop");
      } else {
        assertThat(parse(body).path("type").asText()).isEqualTo("message");
        assertThat(parse(body).path("usage").path("output_tokens").asInt()).isPositive();
      }
    }
    assertThat(gw.anthropic.getAllServeEvents()).as("the open breaker keeps the route out").isEmpty();
  }

  @Test
  void aMessagesErrorOverHttp2KeepsAnthropicsShapeAndTheConnectionServesTheNext() throws IOException {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(AnthropicStubs.message(MODEL, "after the error")));
    Request noKey = new Request.Builder().url(gw.h.url("/v1/messages"))
        .header("anthropic-version", VERSION)
        .post(RequestBody.create(body(false), JSON)).build();

    try (Response refused = client.newCall(noKey).execute()) {
      JsonNode error = parse(refused.body().string());
      assertThat(refused.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
      assertThat(refused.code()).isEqualTo(401);
      assertThat(error.path("type").asText()).isEqualTo("error");
      assertThat(error.path("error").path("type").asText()).isEqualTo("authentication_error");
    }
    try (Response next = client.newCall(messages(GatewayHarness.SILVER_KEY, false)).execute()) {
      assertThat(next.code()).isEqualTo(200);
      assertThat(text(next.body().string())).isEqualTo("after the error");
    }
    assertThat(client.connectionPool().connectionCount()).as("one HTTP/2 connection carried both").isEqualTo(1);
  }

  @Test
  void severalMessagesStreamsShareOneHttp2Connection() throws Exception {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(AnthropicStubs.messageStream(MODEL, "one of many")));
    List<okhttp3.Call> calls = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      calls.add(client.newCall(messages(GatewayHarness.GOLD_KEY, true)));
    }
    List<java.util.concurrent.Future<String>> bodies = new ArrayList<>();
    try (var threads = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
      for (okhttp3.Call call : calls) {
        bodies.add(threads.submit(() -> {
          try (Response answer = call.execute()) {
            assertThat(answer.protocol()).isEqualTo(Protocol.H2_PRIOR_KNOWLEDGE);
            assertThat(answer.code()).isEqualTo(200);
            return answer.body().string();
          }
        }));
      }
      for (var body : bodies) {
        assertThat(text(body.get())).isEqualTo("one of many");
      }
    }
    assertThat(client.connectionPool().connectionCount()).isEqualTo(1);
  }

  private Request messages(String key, boolean stream) {
    return new Request.Builder().url(gw.h.url("/v1/messages"))
        .header("x-api-key", key)
        .header("anthropic-version", VERSION)
        .post(RequestBody.create(body(stream), JSON))
        .build();
  }

  private static String body(boolean stream) {
    return """
        {"model":"%s","max_tokens":256,"stream":%s,
         "messages":[{"role":"user","content":[{"type":"text","text":"Say hello."}]}]}""".formatted(MODEL, stream);
  }

}
