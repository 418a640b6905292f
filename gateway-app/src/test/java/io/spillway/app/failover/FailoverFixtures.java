package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.openai.client.OpenAIClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.http.HttpResponse;
import java.util.stream.Collectors;

/** Shared set-up for the failover tests: local backend stubs, SDK calls that report the serving backend. */
final class FailoverFixtures {
  /**
   * The local backend in these tests speaks OpenAI's API (as Ollama does under {@code /v1}): the
   * router is under test here, not the Ollama translation.
   */
  static final String LOCAL_OPENAI = """
      local:
        kind: openai
      """;

  static final String LOCAL_TEXT = "Served locally";
  static final String CLOUD_TEXT = "Served by the cloud";

  private FailoverFixtures() {}

  /** What a client got: the backend named in {@code x-spillway-backend} and the text. */
  record Served(String backend, String text) {}

  static ChatCompletionCreateParams params() {
    return ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O).addUserMessage("Write a haiku about rivers").build();
  }

  static Served chat(OpenAIClient client) {
    try (HttpResponseFor<ChatCompletion> response = client.chat().completions().withRawResponse().create(params())) {
      String text = response.parse().choices().get(0).message().content().orElse("");
      return new Served(response.headers().values("x-spillway-backend").get(0), text);
    }
  }

  static Served chatStream(OpenAIClient client) {
    try (HttpResponseFor<StreamResponse<ChatCompletionChunk>> response =
            client.chat().completions().withRawResponse().createStreaming(params());
        StreamResponse<ChatCompletionChunk> stream = response.parse()) {
      String text = stream.stream()
          .flatMap(chunk -> chunk.choices().stream())
          .map(choice -> choice.delta().content().orElse(""))
          .collect(Collectors.joining());
      return new Served(response.headers().values("x-spillway-backend").get(0), text);
    }
  }

  /** Answers chat requests on {@code server}: streamed requests with a stream, others with a completion. */
  static void stubChat(WireMockServer server, String text) {
    server.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
        .willReturn(OpenAiStubs.chatStream(false, text.split("(?<= )"))));
    server.stubFor(post("/v1/chat/completions").atPriority(5).willReturn(OpenAiStubs.chatCompletion(text)));
  }

  static void stubChat(WireMockServer server, ResponseDefinitionBuilder answer) {
    server.stubFor(post("/v1/chat/completions").willReturn(answer));
  }

  static JsonNode breaker(GatewayHarness h) {
    HttpResponse<String> response = h.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).GET().build());
    return json(response);
  }

  static HttpResponse<String> setBreaker(GatewayHarness h, String body) {
    return h.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN)
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body)).build());
  }

  static JsonNode json(HttpResponse<String> response) {
    try {
      return Json.parse(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + response.body(), e);
    }
  }

  /** A loopback port nothing listens on: connecting to it is refused at once. */
  static int closedPort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
