package io.spillway.app.anthropic;

import static io.spillway.app.anthropic.MessagesAnswers.eventNames;
import static io.spillway.app.anthropic.MessagesAnswers.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code ping} events on a local Messages stream while a slow local model thinks, with a short
 * {@code local.messages.pingEvery}: before a stand-in Ollama begins its answer (its head held back
 * as a model busy with a long prompt holds it), and in the silences between its events, on an Ollama
 * that serves {@code /v1/messages} itself and on one Spillway translates for, for every tier.
 */
class LocalMessagesPingTest {
  private static final String MODEL = "claude-sonnet-4-5";
  private static final String TEXT = "Thought long, answered short.";

  private GatewayHarness h;

  @AfterEach
  void stop() {
    if (h != null) {
      h.close();
    }
  }

  @ParameterizedTest(name = "{0}, Ollama's own endpoint {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void pingsFlowWhileTheLocalModelHasNotBegunItsAnswer(String key, boolean nativeEndpoint) {
    start(nativeEndpoint);
    if (nativeEndpoint) {
      AnthropicStubs.ollamaMessages(h.ollama, 5, null,
          AnthropicStubs.messageStream(AnthropicStubs.OLLAMA_MODEL, TEXT).withFixedDelay(1_500),
          AnthropicStubs.message(AnthropicStubs.OLLAMA_MODEL, TEXT));
    } else {
      AnthropicStubs.ollamaChatDelayed(h.ollama, AnthropicStubs.textLines(TEXT), 1_500);
    }

    HttpResponse<String> answer = stream(key);

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("local");
    List<String> names = eventNames(answer.body());
    assertThat(names.subList(0, names.indexOf("message_start")))
        .as("pings sent before the model began, every 100 ms from the early answer on: " + names)
        .hasSizeGreaterThanOrEqualTo(3).containsOnly("ping");
    assertThat(names.subList(names.size() - 2, names.size())).containsExactly("message_delta", "message_stop");
    assertThat(text(answer.body())).isEqualTo(TEXT);
  }

  @ParameterizedTest(name = "{0}, Ollama's own endpoint {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void pingsFillTheSilencesBetweenTheEventsOfASlowStream(String key, boolean nativeEndpoint) {
    start(nativeEndpoint);
    if (nativeEndpoint) {
      AnthropicStubs.ollamaMessages(h.ollama, 5, null,
          AnthropicStubs.messageStream(AnthropicStubs.OLLAMA_MODEL, TEXT).withChunkedDribbleDelay(4, 1_600),
          AnthropicStubs.message(AnthropicStubs.OLLAMA_MODEL, TEXT));
    } else {
      AnthropicStubs.ollamaChatDribbled(h.ollama, AnthropicStubs.textLines(TEXT), 4, 1_600);
    }

    HttpResponse<String> answer = stream(key);

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    List<String> names = eventNames(answer.body());
    int start = names.indexOf("message_start");
    assertThat(start).isNotNegative();
    assertThat(names.subList(start, names.size())).as("pings among the answer's events: " + names).contains("ping");
    assertThat(names.get(names.size() - 1)).isEqualTo("message_stop");
    assertThat(text(answer.body())).isEqualTo(TEXT);
  }

  private void start(boolean nativeEndpoint) {
    h = GatewayHarness.start("""
        local:
          messages:
            pingEvery: 100ms
        """);
    AnthropicStubs.ollamaReady(h.ollama);
    if (nativeEndpoint) {
      AnthropicStubs.ollamaServesMessages(h.ollama);
    }
    h.gateway().local().checkNow();
    ClaudeRouteGateway.forceBreakerOpen(h);
  }

  private HttpResponse<String> stream(String key) {
    return h.post("/v1/messages", null, """
        {"model":"%s","max_tokens":256,"stream":true,
         "messages":[{"role":"user","content":"Think hard, then answer."}]}""".formatted(MODEL),
        "x-api-key", key, "anthropic-version", "2023-06-01");
  }
}
