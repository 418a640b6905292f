package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.local.ollama.OllamaTesting.data;
import static io.spillway.local.ollama.OllamaTesting.drain;
import static io.spillway.local.ollama.OllamaTesting.json;
import static io.spillway.local.ollama.OllamaTesting.request;
import static io.spillway.local.ollama.OllamaTesting.sentBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.util.List;
import java.util.stream.Collectors;
import io.spillway.server.testing.EventLoopClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code /v1/responses} over Ollama's {@code /api/chat}: text, sampling, streams; stored state refused. */
@ExtendWith(EventLoopClient.class)
class OllamaResponsesTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final OllamaBackend backend = OllamaTesting.backend(ollama.baseUrl(), clock);

  @Test
  void stringInputAndInstructionsBecomeChatMessagesAndTheAnswerAResponse() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "Blue, mostly.", "stop", 36, 4)));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.RESPONSES, """
        {"model":"gpt-4o-mini","instructions":"Answer in three words.","input":"Why is the sky blue?",
         "max_output_tokens":50,"temperature":0.5,"store":true,"metadata":{"team":"web"}}""")));

    JsonNode sent = sentBody(ollama, "/api/chat");
    assertThat(sent.path("messages").toString()).isEqualTo("[{\"role\":\"system\",\"content\":\"Answer in three words.\"},"
        + "{\"role\":\"user\",\"content\":\"Why is the sky blue?\"}]");
    assertThat(sent.path("options").toString()).isEqualTo("{\"temperature\":0.5,\"num_predict\":50}");
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isNull();

    JsonNode answer = json(response);
    assertThat(answer.path("object").asText()).isEqualTo("response");
    assertThat(answer.path("id").asText()).startsWith("resp_");
    assertThat(answer.path("status").asText()).isEqualTo("completed");
    assertThat(answer.path("model").asText()).isEqualTo("llama3.2:3b");
    assertThat(answer.path("instructions").asText()).isEqualTo("Answer in three words.");
    JsonNode message = answer.path("output").get(0);
    assertThat(message.path("type").asText()).isEqualTo("message");
    assertThat(message.path("role").asText()).isEqualTo("assistant");
    assertThat(message.path("content").get(0).path("type").asText()).isEqualTo("output_text");
    assertThat(message.path("content").get(0).path("text").asText()).isEqualTo("Blue, mostly.");
    assertThat(answer.path("usage").path("input_tokens").asInt()).isEqualTo(36);
    assertThat(answer.path("usage").path("output_tokens").asInt()).isEqualTo(4);
    assertThat(answer.path("usage").path("total_tokens").asInt()).isEqualTo(40);
    assertThat(answer.path("metadata").path("team").asText()).isEqualTo("web");
  }

  @Test
  void messageItemsWithTextPartsAreTranslated() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("qwen2.5-coder:7b", "ok", "stop", 1, 1)));

    Blocking.await(backend.callAsync(request(Route.RESPONSES, """
        {"model":"gpt-4.1","input":[
          {"role":"developer","content":"Be terse."},
          {"type":"message","role":"user","content":[{"type":"input_text","text":"Hi"}]},
          {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Hello."}]},
          {"role":"user","content":"Again"}]}""")));

    assertThat(sentBody(ollama, "/api/chat").path("messages").toString()).isEqualTo(
        "[{\"role\":\"system\",\"content\":\"Be terse.\"},{\"role\":\"user\",\"content\":\"Hi\"},"
            + "{\"role\":\"assistant\",\"content\":\"Hello.\"},{\"role\":\"user\",\"content\":\"Again\"}]");
  }

  @Test
  void lengthStopMakesAnIncompleteResponse() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "Blue because", "length", 10, 2)));

    JsonNode answer = json(Blocking.await(backend.callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-4o-mini\",\"input\":\"Why?\",\"max_output_tokens\":2}"))));

    assertThat(answer.path("status").asText()).isEqualTo("incomplete");
    assertThat(answer.path("incomplete_details").path("reason").asText()).isEqualTo("max_output_tokens");
  }

  @Test
  void streamBecomesTypedResponseEventsEndingInCompletedWithUsage() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        OllamaStubs.chatStreamBody("llama3.2:3b", "stop", 36, 3, "Blue", " light", " scatters"))));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-4o-mini\",\"input\":\"Why is the sky blue?\",\"stream\":true}")));

    List<SseEvent> events = drain(response);
    assertThat(events).extracting(SseEvent::event).containsExactly(
        "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.delta", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed");
    assertThat(events).noneMatch(SseEvent::isDone);
    List<JsonNode> data = events.stream().map(OllamaTesting::data).toList();
    for (int i = 0; i < data.size(); i++) {
      assertThat(data.get(i).path("type").asText()).isEqualTo(events.get(i).event());
      assertThat(data.get(i).path("sequence_number").asInt()).isEqualTo(i);
    }
    assertThat(data.get(0).path("response").path("status").asText()).isEqualTo("in_progress");
    String deltas = data.stream().filter(d -> d.path("type").asText().equals("response.output_text.delta"))
        .map(d -> d.path("delta").asText()).collect(Collectors.joining());
    assertThat(deltas).isEqualTo("Blue light scatters");
    assertThat(data.get(7).path("text").asText()).isEqualTo("Blue light scatters");
    JsonNode completed = data.get(data.size() - 1).path("response");
    assertThat(completed.path("status").asText()).isEqualTo("completed");
    assertThat(completed.path("id").asText()).isEqualTo(data.get(0).path("response").path("id").asText());
    assertThat(completed.path("output").get(0).path("content").get(0).path("text").asText())
        .isEqualTo("Blue light scatters");
    assertThat(completed.path("usage").path("input_tokens").asInt()).isEqualTo(36);
    assertThat(completed.path("usage").path("output_tokens").asInt()).isEqualTo(3);
    assertThat(data(events.get(2)).path("item").path("id").asText())
        .isEqualTo(data.get(4).path("item_id").asText());
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "{\"model\":\"gpt-4o\",\"input\":\"hi\",\"previous_response_id\":\"resp_1\"} | previous_response_id | previous_response_id",
    "{\"model\":\"gpt-4o\",\"input\":\"hi\",\"conversation\":\"conv_1\"} | conversation | conversation",
    "{\"model\":\"gpt-4o\",\"input\":\"hi\",\"background\":true} | background | background",
    "{\"model\":\"gpt-4o\",\"input\":[{\"type\":\"item_reference\",\"id\":\"msg_1\"}]} | item_reference | input[0]",
    "{\"model\":\"gpt-4o\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\",\"image_url\":\"https://example.com/a.png\"}]}]} | image URLs that are not inline | input",
    "{\"model\":\"gpt-4o\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_file\",\"file_id\":\"file_1\"}]}]} | 'input_file' content | input[0].content"
  })
  void untranslatableRequestsAreRefusedNamingWhatIsUnsupported(String body, String named, String param) {
    assertThatThrownBy(() -> Blocking.await(backend.callAsync(request(Route.RESPONSES, body))))
        .isInstanceOfSatisfying(UnsupportedOnLocalException.class, e -> {
          assertThat(e.code()).isEqualTo("unsupported_on_local");
          assertThat(e.param()).isEqualTo(param);
          assertThat(e.retryAfter()).as("only the router knows when the cloud may serve it").isNull();
          assertThat(e.getMessage()).contains(named).contains("Responses API");
        });
    assertThat(ollama.getAllServeEvents()).isEmpty();
  }

  @Test
  void theRefusalIsAnOpenAiErrorBodyWithoutRetryAfter() {
    GatewayException refusal = org.assertj.core.api.Assertions.catchThrowableOfType(GatewayException.class,
        () -> Blocking.await(backend.callAsync(request(Route.RESPONSES,
            "{\"model\":\"gpt-4o\",\"input\":\"hi\",\"previous_response_id\":\"resp_1\"}"))));

    GatewayResponse response = ErrorMapper.toResponse(refusal);

    assertThat(response.status()).isEqualTo(400);
    assertThat(response.headers().get("retry-after")).isNull();
    JsonNode error = json(response).path("error");
    assertThat(error.path("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.path("code").asText()).isEqualTo("unsupported_on_local");
    assertThat(error.path("param").asText()).isEqualTo("previous_response_id");
    assertThat(error.path("message").asText()).contains("previous_response_id");
  }

  @Test
  void storeTrueWithTheWholeConversationIsServedWithoutClaimingToStore() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "ok", "stop", 3, 1)));

    JsonNode answer = json(Blocking.await(backend.callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-4o-mini\",\"input\":\"hi\",\"store\":true}"))));

    assertThat(answer.path("status").asText()).isEqualTo("completed");
    assertThat(answer.path("store").asBoolean()).isFalse();
  }
}
