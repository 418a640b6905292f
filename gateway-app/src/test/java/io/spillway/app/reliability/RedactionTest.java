package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.CLOUD_KEY;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.observe.AccessLog;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LogCapture;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.ScriptedUpstream;
import io.spillway.core.redact.Redactor;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The cloud key never leaves the gateway, whatever an upstream echoes and however its JSON writer
 * spells it: in a buffered body, in a streamed event (also as the error that ends a stream), in a
 * header, in an error message the gateway quotes, in the access log.
 */
class RedactionTest {
  /** Spellings of the cloud key an upstream's JSON writer may use; all mean the same string. */
  static Stream<String> spellings() {
    return Stream.of(
        CLOUD_KEY,
        "\\u0073" + CLOUD_KEY.substring(1),
        escapedEvery(CLOUD_KEY, "\\u%04X"),
        escapedEvery(CLOUD_KEY, "\\u%04x"),
        CLOUD_KEY.substring(0, 3) + "\\u0063ompany\\u002Dcloud-secre\\u0074");
  }

  private static String escapedEvery(String text, String format) {
    StringBuilder out = new StringBuilder();
    text.chars().forEach(c -> out.append(format.formatted(c)));
    return out.toString();
  }

  /** Whether a body shows the key, plain or in any escaped spelling. */
  private static boolean showsTheKey(String text) {
    return Redactor.of(List.of(CLOUD_KEY)).contains(text);
  }

  @ParameterizedTest
  @MethodSource("spellings")
  void bufferedAnswersEchoingTheCloudKeyInAnySpellingReachTheClientRedacted(String spelled) {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(400,
          "{\"error\":{\"message\":\"bad header Authorization: Bearer " + spelled
              + "\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}")));
      h.cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("echo-success"))
          .willReturn(OpenAiStubs.json(200, OpenAiStubs.chatCompletionBody("x", 1, 1).replace("\"x\"",
              "\"your key is " + spelled + "\""))));
      h.cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("echo-plain-error"))
          .willReturn(OpenAiStubs.json(502, "{\"message\":\"upstream said " + spelled + "\"}")));

      HttpResponse<String> error = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
      HttpResponse<String> success = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "echo-success", false));
      HttpResponse<String> rewrapped =
          h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "echo-plain-error", false));

      assertThat(error.statusCode()).isEqualTo(400);
      assertThat(success.statusCode()).isEqualTo(200);
      assertThat(rewrapped.statusCode()).isEqualTo(502);
      for (HttpResponse<String> answer : List.of(error, success, rewrapped)) {
        assertThat(showsTheKey(answer.body())).as(answer.body()).isFalse();
        assertThat(answer.body()).contains(Redactor.MARK);
      }
    }
  }

  @Test
  void midStreamErrorEventEchoingTheCloudKeyReachesTheClientRedacted() throws Exception {
    String escaped = "\\u0073" + CLOUD_KEY.substring(1);
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"created\":1,"
              + "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"key=" + CLOUD_KEY
              + "\"},\"finish_reason\":null}]}\n\n");
          ScriptedUpstream.writeChunk(out, "data: {\"error\":{\"message\":\"upstream failed using " + escaped
              + "\",\"type\":\"server_error\",\"param\":null,\"code\":\"" + CLOUD_KEY + "\"}}\n\n");
          ScriptedUpstream.endChunks(out);
        });
        LogCapture logs = new LogCapture();
        GatewayHarness h = GatewayHarness.start(
            "cloud:\n  baseUrl: " + upstream.baseUrl() + "\nlocal:\n  enabled: false\nlogging:\n  payloads: true")) {

      HttpResponse<String> stream = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true));

      assertThat(stream.statusCode()).isEqualTo(200);
      assertThat(stream.body()).contains("data: ").contains("upstream failed using " + Redactor.MARK);
      assertThat(showsTheKey(stream.body())).as(stream.body()).isFalse();
      List<String> access = logs.lines().stream().filter(line -> line.contains(AccessLog.LOGGER)).toList();
      assertThat(access).as("the access line, with the completion logged").isNotEmpty();
      assertThat(access).noneMatch(RedactionTest::showsTheKey);
    }
  }

  @Test
  void headerEchoingTheCloudKeyReachesTheClientRedacted() {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.cloud.stubFor(post("/v1/chat/completions")
          .willReturn(OpenAiStubs.chatCompletion("fine").withHeader("openai-model", "gpt-4o;" + CLOUD_KEY)));

      HttpResponse<String> answer = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.headers().firstValue("openai-model")).hasValue("gpt-4o;" + Redactor.MARK);
    }
  }

  @Test
  void accessLogNeverCarriesTheCloudKeyAnUpstreamPutsInAnErrorCodeOrACompletion() {
    List<String> lines;
    try (LogCapture logs = new LogCapture();
        GatewayHarness h = GatewayHarness.start("logging:\n  payloads: true")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(400,
          "{\"error\":{\"message\":\"no\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"\\u0073"
              + CLOUD_KEY.substring(1) + "\"}}")));
      h.cloud.stubFor(post("/v1/chat/completions").atPriority(1).withRequestBody(containing("echo"))
          .willReturn(OpenAiStubs.chatCompletion("the key is " + CLOUD_KEY)));

      assertThat(h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false)).statusCode())
          .isEqualTo(400);
      assertThat(h.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "echo", false)).statusCode())
          .isEqualTo(200);
      lines = logs.lines();
    }

    List<String> access = lines.stream().filter(line -> line.contains(AccessLog.LOGGER)).toList();
    assertThat(access).hasSize(2);
    assertThat(lines).noneMatch(RedactionTest::showsTheKey);
    assertThat(access).anyMatch(line -> line.contains("the key is " + Redactor.MARK));
  }

  @Test
  void errorMessageQuotingWhatTheLocalBackendSaidIsRedacted() {
    try (GatewayHarness h = GatewayHarness.start()) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      h.ollama.stubFor(post("/api/chat").willReturn(aResponse().withStatus(200)
          .withHeader("Content-Type", "application/x-ndjson")
          .withBody("{\"model\":\"qwen2.5-coder:7b\",\"created_at\":\"2026-11-10T10:00:00Z\","
              + "\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n"
              + "{\"error\":\"model runner crashed while using " + CLOUD_KEY + "\"}\n")));

      HttpResponse<String> stream = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true));

      assertThat(stream.statusCode()).isEqualTo(200);
      assertThat(stream.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(stream.body()).contains("model runner crashed while using " + Redactor.MARK);
      assertThat(showsTheKey(stream.body())).as(stream.body()).isFalse();
    }
  }
}
