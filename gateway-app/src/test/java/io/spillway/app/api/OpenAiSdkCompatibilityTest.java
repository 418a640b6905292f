package io.spillway.app.api;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.openai.client.OpenAIClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The official OpenAI Java SDK, pointed at Spillway, gets what it would get from the cloud. */
class OpenAiSdkCompatibilityTest {
  static GatewayHarness harness;
  static OpenAIClient client;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start();
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

  @Test
  void chatCompletionReachesTheCloudWithTheCompanyKey() {
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("Hello there")));

    ChatCompletion completion = client.chat().completions().create(
        ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O).addUserMessage("Say hello").build());

    assertThat(completion.choices().get(0).message().content()).contains("Hello there");
    assertThat(completion.usage().orElseThrow().totalTokens()).isEqualTo(19);
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
        .withHeader("Authorization", equalTo("Bearer " + GatewayHarness.CLOUD_KEY)));
  }

  @Test
  void chatStreamArrivesChunkByChunk() {
    harness.cloud.stubFor(post("/v1/chat/completions")
        .willReturn(OpenAiStubs.chatStream(false, "Hel", "lo", " world")));

    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(
        ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O).addUserMessage("Say hello").build())) {
      String text = stream.stream()
          .flatMap(chunk -> chunk.choices().stream())
          .map(choice -> choice.delta().content().orElse(""))
          .collect(Collectors.joining());
      assertThat(text).isEqualTo("Hello world");
    }
  }

  @Test
  void legacyCompletionsWork() {
    harness.cloud.stubFor(post("/v1/completions").willReturn(OpenAiStubs.completion("def add(a, b):")));

    Completion completion = client.completions().create(
        CompletionCreateParams.builder().model(CompletionCreateParams.Model.GPT_3_5_TURBO_INSTRUCT)
            .prompt("# add two numbers").maxTokens(16).build());

    assertThat(completion.choices().get(0).text()).isEqualTo("def add(a, b):");
  }

  @Test
  void legacyCompletionStreamsWork() {
    harness.cloud.stubFor(post("/v1/completions").willReturn(OpenAiStubs.completionStream("def ", "add")));

    try (StreamResponse<Completion> stream = client.completions().createStreaming(
        CompletionCreateParams.builder().model(CompletionCreateParams.Model.GPT_3_5_TURBO_INSTRUCT)
            .prompt("# add").build())) {
      String text = stream.stream().map(c -> c.choices().get(0).text()).collect(Collectors.joining());
      assertThat(text).isEqualTo("def add");
    }
  }

  @Test
  void modelsAreListed() {
    harness.cloud.stubFor(get("/v1/models").willReturn(OpenAiStubs.models("gpt-4o", "gpt-4o-mini")));

    List<String> ids = client.models().list().data().stream().map(Model::id).toList();

    assertThat(ids).containsExactly("gpt-4o", "gpt-4o-mini");
    harness.cloud.verify(getRequestedFor(urlEqualTo("/v1/models"))
        .withHeader("Authorization", equalTo("Bearer " + GatewayHarness.CLOUD_KEY)));
  }

  @Test
  void responsesApiWorks() {
    harness.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.response("Four.")));

    Response response = client.responses().create(
        ResponseCreateParams.builder().model(ChatModel.GPT_4_1).input("What is 2+2?").build());

    assertThat(response.output().get(0).asMessage().content().get(0).asOutputText().text()).isEqualTo("Four.");
  }

  @Test
  void responsesApiStreamKeepsItsTypedEvents() {
    harness.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.responseStream("Fo", "ur.")));

    try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(
        ResponseCreateParams.builder().model(ChatModel.GPT_4_1).input("What is 2+2?").build())) {
      List<ResponseStreamEvent> events = stream.stream().toList();
      String deltas = events.stream().filter(ResponseStreamEvent::isOutputTextDelta)
          .map(e -> e.asOutputTextDelta().delta()).collect(Collectors.joining());
      assertThat(deltas).isEqualTo("Four.");
      assertThat(events.get(0).isCreated()).isTrue();
      assertThat(events.get(events.size() - 1).isCompleted()).isTrue();
    }
  }
}
