package io.spillway.app.anthropic;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The exact cache answers Anthropic's Messages API as it answers chat: a deterministic repeat
 * ({@code temperature} 0) is a hit and never reaches the Anthropic route, buffered or streamed,
 * for every tier; a Messages answer is never served to a chat request with the same model and
 * text, nor a chat answer to a Messages request, and another {@code anthropic-beta} is another entry.
 */
class MessagesCacheTest {
  private static final String MODEL = "claude-sonnet-4-5";

  @RegisterExtension
  final ClaudeRouteGateway gw = ClaudeRouteGateway.withOpenAiRoute();

  @ParameterizedTest(name = "{0}, stream {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void aDeterministicMessagesRepeatIsAHitAndNeverCrossesToChat(String key, boolean stream) {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(stream
        ? AnthropicStubs.messageStream(MODEL, "Cached from Claude.") : AnthropicStubs.message(MODEL, "Cached from Claude.")));
    gw.openai.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("From the chat route.")));

    HttpResponse<String> first = messages(key, stream, "claude-code-20250219");
    HttpResponse<String> second = messages(key, stream, "claude-code-20250219");

    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(first.headers().firstValue("x-spillway-cache")).hasValue("miss");
    assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
    assertThat(second.headers().firstValue("x-spillway-cache")).hasValue("hit");
    assertThat(second.body()).isEqualTo(first.body());
    gw.anthropic.verify(1, postRequestedFor(urlEqualTo("/v1/messages")));

    HttpResponse<String> chat = gw.h.post("/v1/chat/completions", key, """
        {"model":"%s","temperature":0,"stream":%s,"max_tokens":64,
         "messages":[{"role":"user","content":"Say hello."}]}""".formatted(MODEL, stream));
    assertThat(chat.statusCode()).as(chat.body()).isEqualTo(200);
    assertThat(chat.headers().firstValue("x-spillway-cache")).hasValue("miss");
    assertThat(chat.body()).contains("From the chat route.").doesNotContain("Cached from Claude.");

    HttpResponse<String> otherBeta = messages(key, stream, "another-beta-2026-01-01");
    assertThat(otherBeta.headers().firstValue("x-spillway-cache")).as("another beta, another entry").hasValue("miss");
    gw.anthropic.verify(2, postRequestedFor(urlEqualTo("/v1/messages")));

    HttpResponse<String> third = messages(key, stream, "claude-code-20250219");
    assertThat(third.headers().firstValue("x-spillway-cache")).hasValue("hit");
    assertThat(third.body()).contains("Cached from Claude.");
  }

  @ParameterizedTest(name = "{0}, stream {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void aMessagesRequestWithSamplingIsNotCached(String key, boolean stream) {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(stream
        ? AnthropicStubs.messageStream(MODEL, "Fresh.") : AnthropicStubs.message(MODEL, "Fresh.")));

    for (int i = 0; i < 2; i++) {
      HttpResponse<String> answer = gw.h.post("/v1/messages", null, """
          {"model":"%s","max_tokens":64,"temperature":0.7,"stream":%s,
           "messages":[{"role":"user","content":"Say hello."}]}""".formatted(MODEL, stream), "x-api-key", key);
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-cache")).isNotEqualTo(java.util.Optional.of("hit"));
    }
    gw.anthropic.verify(2, postRequestedFor(urlEqualTo("/v1/messages")));
  }

  private HttpResponse<String> messages(String key, boolean stream, String beta) {
    return gw.messages(key, """
        {"model":"%s","max_tokens":64,"temperature":0,"stream":%s,
         "messages":[{"role":"user","content":"Say hello."}]}""".formatted(MODEL, stream),
        "anthropic-version", "2023-06-01", "anthropic-beta", beta);
  }
}
