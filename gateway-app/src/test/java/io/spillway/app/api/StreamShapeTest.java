package io.spillway.app.api;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.OpenAIException;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a streaming client receives is always a stream an SDK can read, whatever the upstream sent:
 * a JSON answer to a stream request becomes the equivalent stream, and an upstream stream that is
 * not server-sent events, or whose events are not JSON, ends with an OpenAI error the SDK raises.
 * The client is the official OpenAI Java SDK.
 */
class StreamShapeTest {
  private static final String CHUNK = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
      + "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"early \"},\"finish_reason\":null}]}\n\n";

  private static GatewayHarness harness;
  private static OpenAIClient client;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start("local:\n  enabled: false");
    client = harness.openAi(GatewayHarness.GOLD_KEY);
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void reset() {
    harness.cloud.resetAll();
  }

  private static ChatCompletionCreateParams chat() {
    return ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O).addUserMessage("Say hello").build();
  }

  @Test
  void jsonAnswerToAChatStreamRequestReachesTheSdkAsTheEquivalentStream() {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("Hello there")));

    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(chat())) {
      List<ChatCompletionChunk> chunks = stream.stream().toList();

      String text = chunks.stream().flatMap(chunk -> chunk.choices().stream())
          .map(choice -> choice.delta().content().orElse("")).collect(Collectors.joining());
      assertThat(text).isEqualTo("Hello there");
      assertThat(chunks).anySatisfy(chunk -> assertThat(chunk.choices()).anySatisfy(choice ->
          assertThat(choice.finishReason().map(Object::toString)).hasValue("stop")));
    }
  }

  @Test
  void jsonAnswerToACompletionsStreamRequestReachesTheSdkAsTheEquivalentStream() {
    harness.cloud.stubFor(post("/v1/completions").willReturn(OpenAiStubs.completion("return a + b")));

    try (StreamResponse<Completion> stream = client.completions().createStreaming(
        CompletionCreateParams.builder().model(CompletionCreateParams.Model.GPT_3_5_TURBO_INSTRUCT)
            .prompt("# add").build())) {
      String text = stream.stream().flatMap(c -> c.choices().stream()).map(c -> c.text())
          .collect(Collectors.joining());

      assertThat(text).isEqualTo("return a + b");
    }
  }

  @Test
  void jsonAnswerToAResponsesStreamRequestReachesTheSdkAsTypedEvents() {
    harness.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.response("Four.")));

    try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(
        ResponseCreateParams.builder().model(ChatModel.GPT_4_1).input("What is 2+2?").build())) {
      List<ResponseStreamEvent> events = stream.stream().toList();

      assertThat(events.get(0).isCreated()).isTrue();
      assertThat(events.stream().filter(ResponseStreamEvent::isOutputTextDelta)
          .map(e -> e.asOutputTextDelta().delta()).collect(Collectors.joining())).isEqualTo("Four.");
      assertThat(events.get(events.size() - 1).isCompleted()).isTrue();
    }
  }

  @Test
  void eventThatIsNotJsonMidStreamEndsTheSdkStreamWithAnError() {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "text/event-stream")
        .withBody(CHUNK + "data: <html>upstream proxy error</html>\n\n" + CHUNK + "data: [DONE]\n\n")));
    List<String> seen = new ArrayList<>();

    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(chat())) {
      assertThatThrownBy(() -> stream.stream().forEach(chunk ->
              chunk.choices().forEach(choice -> seen.add(choice.delta().content().orElse("")))))
          .isInstanceOf(OpenAIException.class)
          .hasMessageContaining("not a JSON object");
    }
    assertThat(seen).containsExactly("early ");
  }

  @Test
  void bodyThatIsNotServerSentEventsMidStreamEndsTheSdkStreamWithAnError() {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "text/event-stream")
        .withBody(CHUNK + "<html><body>504 Gateway Time-out</body></html>\n")));

    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(chat())) {
      assertThatThrownBy(() -> stream.stream().forEach(chunk -> { }))
          .isInstanceOf(OpenAIException.class)
          .hasMessageContaining("is not server-sent events");
    }
  }

  @Test
  void streamThatIsNotServerSentEventsFromTheStartIsAnOpenAiErrorTheSdkRaises() {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "text/event-stream").withBody("Service temporarily unavailable\n")));

    assertThatThrownBy(() -> {
      try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(chat())) {
        stream.stream().forEach(chunk -> { });
      }
    }).isInstanceOf(OpenAIException.class).hasMessageContaining("502").hasMessageContaining("is not server-sent events");
  }
}
