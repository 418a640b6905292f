package io.spillway.app.local;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import com.openai.core.JsonValue;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseCustomToolCall;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStreamEvent;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A Codex turn while the cloud is at capacity: the real gateway, the official OpenAI Java SDK's
 * Responses API sending the request bodies the Codex CLI sends (captured fixtures, tools included),
 * and a fake local server that answers with tool calls (several in one turn). Every tier, both local
 * kinds (Ollama's native API, and an OpenAI-compatible server with only chat completions), whole
 * answers and streams.
 */
class ResponsesToolsFailoverTest {
  static final String EXEC_ARGS = "{\"cmd\":\"echo hello-from-tool\"}";
  static final String PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n";

  static Stream<Arguments> tiersAndKinds() {
    return Stream.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)
        .flatMap(key -> Stream.of(Arguments.of(tierOf(key), key, "ollama"), Arguments.of(tierOf(key), key, "openai")));
  }

  static String tierOf(String key) {
    return key.equals(GatewayHarness.GOLD_KEY) ? "gold" : key.equals(GatewayHarness.SILVER_KEY) ? "silver" : "bronze";
  }

  static JsonNode fixture(String name) {
    try (InputStream in = ResponsesToolsFailoverTest.class.getResourceAsStream("/fixtures/codex/" + name + ".json")) {
      return Json.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The Codex request {@code name} as SDK params: its fields as they are, {@code stream} set by the SDK. */
  static ResponseCreateParams params(String name) {
    JsonNode body = fixture(name);
    Map<String, JsonValue> fields = new LinkedHashMap<>();
    body.properties().forEach(field -> {
      if (!field.getKey().equals("model") && !field.getKey().equals("stream")) {
        fields.put(field.getKey(), JsonValue.from(Json.MAPPER.convertValue(field.getValue(), Object.class)));
      }
    });
    return ResponseCreateParams.builder().model(body.path("model").asText()).additionalBodyProperties(fields).build();
  }

  static GatewayHarness start(String kind) {
    GatewayHarness h = GatewayHarness.start("local:\n  kind: " + kind + "\n");
    h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.atCapacity()));
    h.ollama.stubFor(get("/api/version").willReturn(json("{\"version\":\"0.12.6\"}")));
    h.ollama.stubFor(get("/api/tags").willReturn(json(
        "{\"models\":[{\"name\":\"qwen2.5-coder:7b\",\"model\":\"qwen2.5-coder:7b\"},"
            + "{\"name\":\"llama3.2:3b\",\"model\":\"llama3.2:3b\"}]}")));
    // Each server tells the model's context window, as the real ones do (Ollama's /api/show, vLLM's
    // max_model_len): Codex's instructions and tools alone do not fit the 8192 tokens assumed otherwise.
    h.ollama.stubFor(get("/v1/models").willReturn(json(
        "{\"object\":\"list\",\"data\":[{\"id\":\"qwen2.5-coder:7b\",\"object\":\"model\",\"max_model_len\":32768},"
            + "{\"id\":\"llama3.2:3b\",\"object\":\"model\",\"max_model_len\":32768}]}")));
    h.ollama.stubFor(post("/api/show").willReturn(json(
        "{\"model_info\":{\"general.architecture\":\"qwen2\",\"qwen2.context_length\":32768}}")));
    h.ollama.stubFor(post("/api/show").withRequestBody(matchingJsonPath("$.model", equalTo("llama3.2:3b")))
        .willReturn(json("{\"model_info\":{\"general.architecture\":\"llama\",\"llama.context_length\":131072}}")));
    if (kind.equals("ollama")) {
      stubOllamaCalls(h);
    } else {
      stubChatCalls(h);
    }
    h.gateway().local().checkNow();
    assertThat(h.gateway().local().server("local").contextWindows().source("qwen2.5-coder:7b")).isEqualTo("server");
    return h;
  }

  static ResponseDefinitionBuilder json(String body) {
    return aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody(body);
  }

  /** Ollama answers with two calls: exec_command, and apply_patch (a custom tool, as a function with 'input'). */
  static void stubOllamaCalls(GatewayHarness h) {
    String calls = "[{\"function\":{\"name\":\"exec_command\",\"arguments\":" + EXEC_ARGS + "}},"
        + "{\"function\":{\"name\":\"apply_patch\",\"arguments\":{\"input\":" + OpenAiStubs.quote(PATCH) + "}}}]";
    String counts = "\"prompt_eval_count\":1200,\"eval_count\":40";
    h.ollama.stubFor(post("/api/chat").atPriority(5).willReturn(json(
        "{\"model\":\"qwen2.5-coder:7b\",\"created_at\":\"2026-11-10T10:00:00Z\",\"message\":{\"role\":\"assistant\","
            + "\"content\":\"Running it.\",\"tool_calls\":" + calls + "},\"done_reason\":\"stop\",\"done\":true,"
            + counts + "}")));
    String stream = "{\"model\":\"qwen2.5-coder:7b\",\"message\":{\"role\":\"assistant\",\"content\":\"Running\"},\"done\":false}\n"
        + "{\"model\":\"qwen2.5-coder:7b\",\"message\":{\"role\":\"assistant\",\"content\":\" it.\"},\"done\":false}\n"
        + "{\"model\":\"qwen2.5-coder:7b\",\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":" + calls
        + "},\"done\":false}\n"
        + "{\"model\":\"qwen2.5-coder:7b\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done_reason\":\"stop\","
        + "\"done\":true," + counts + "}\n";
    h.ollama.stubFor(post("/api/chat").atPriority(1).withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
        .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/x-ndjson").withBody(stream)));
  }

  /** A chat-completions server answers with the same two calls, arguments streamed in pieces. */
  static void stubChatCalls(GatewayHarness h) {
    String patchArgs = Json.toString(Json.object().put("input", PATCH));
    String message = "{\"role\":\"assistant\",\"content\":\"Running it.\",\"tool_calls\":["
        + "{\"id\":\"call_exec\",\"type\":\"function\",\"function\":{\"name\":\"exec_command\",\"arguments\":"
        + OpenAiStubs.quote(EXEC_ARGS) + "}},"
        + "{\"id\":\"call_patch\",\"type\":\"function\",\"function\":{\"name\":\"apply_patch\",\"arguments\":"
        + OpenAiStubs.quote(patchArgs) + "}}]}";
    h.ollama.stubFor(post("/v1/chat/completions").atPriority(5).willReturn(json(
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"qwen2.5-coder:7b\","
            + "\"choices\":[{\"index\":0,\"message\":" + message + ",\"finish_reason\":\"tool_calls\"}],"
            + "\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":40,\"total_tokens\":1240}}")));
    String head = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"qwen2.5-coder:7b\",";
    List<String> chunks = List.of(
        head + "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Running\"},\"finish_reason\":null}]}",
        head + "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" it.\"},\"finish_reason\":null}]}",
        head + "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_exec\",\"type\":\"function\","
            + "\"function\":{\"name\":\"exec_command\",\"arguments\":\"{\\\"cmd\\\":\"}}]},\"finish_reason\":null}]}",
        head + "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
            + "\"\\\"echo hello-from-tool\\\"}\"}}]},\"finish_reason\":null}]}",
        head + "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_patch\",\"type\":\"function\","
            + "\"function\":{\"name\":\"apply_patch\",\"arguments\":" + OpenAiStubs.quote(patchArgs) + "}}]},"
            + "\"finish_reason\":null}]}",
        head + "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}",
        head + "\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":40,\"total_tokens\":1240}}");
    StringBuilder sse = new StringBuilder();
    chunks.forEach(chunk -> sse.append("data: ").append(chunk).append("\n\n"));
    sse.append("data: [DONE]\n\n");
    h.ollama.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
        .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(sse.toString())));
  }

  static String localPath(String kind) {
    return kind.equals("ollama") ? "/api/chat" : "/v1/chat/completions";
  }

  @ParameterizedTest(name = "{0} key, local.kind {2}")
  @MethodSource("tiersAndKinds")
  void aCodexTurnGetsItsToolCallsFromTheLocalModelWhileTheCloudIsAtCapacity(String tier, String key, String kind) {
    try (GatewayHarness h = start(kind)) {
      HttpResponseFor<Response> raw = h.openAi(key).responses().withRawResponse().create(params("first-turn"));
      Response response = raw.parse();

      assertThat(raw.statusCode()).isEqualTo(200);
      assertThat(raw.headers().values("x-spillway-backend")).containsExactly("local");
      assertThat(raw.headers().values("x-spillway-dropped-params").get(0))
          .contains("tools.web_search", "tools.tool_search", "reasoning");
      List<ResponseOutputItem> output = response.output();
      assertThat(output).hasSize(3);
      assertThat(output.get(0).asMessage().content().get(0).asOutputText().text()).isEqualTo("Running it.");
      ResponseFunctionToolCall exec = output.get(1).asFunctionCall();
      assertThat(exec.name()).isEqualTo("exec_command");
      assertThat(exec.arguments()).isEqualTo(EXEC_ARGS);
      assertThat(exec.callId()).startsWith("call_");
      ResponseCustomToolCall patch = output.get(2).asCustomToolCall();
      assertThat(patch.name()).isEqualTo("apply_patch");
      assertThat(patch.input()).isEqualTo(PATCH);
      assertThat(patch.callId()).isNotEqualTo(exec.callId());
      assertThat(response.usage().orElseThrow().totalTokens()).isEqualTo(1240);

      JsonNode sent = onlyBody(h, localPath(kind));
      assertThat(sent.path("tools")).extracting(t -> t.path("function").path("name").asText())
          .contains("exec_command", "apply_patch").doesNotContain("web_search", "tool_search");
      h.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/responses")));
    }
  }

  @ParameterizedTest(name = "{0} key, local.kind {2}")
  @MethodSource("tiersAndKinds")
  void aStreamedCodexTurnGetsOpenAisEventSequenceWithTheCalls(String tier, String key, String kind) {
    try (GatewayHarness h = start(kind);
        HttpResponseFor<StreamResponse<ResponseStreamEvent>> raw =
            h.openAi(key).responses().withRawResponse().createStreaming(params("first-turn"));
        StreamResponse<ResponseStreamEvent> stream = raw.parse()) {
      List<ResponseStreamEvent> events = stream.stream().toList();

      assertThat(raw.headers().values("x-spillway-backend")).containsExactly("local");
      assertThat(events.get(0).isCreated()).isTrue();
      assertThat(events.get(1).isInProgress()).isTrue();
      assertThat(events).filteredOn(ResponseStreamEvent::isOutputItemAdded).hasSize(3);
      assertThat(events).filteredOn(ResponseStreamEvent::isOutputItemDone).hasSize(3);
      assertThat(events).filteredOn(ResponseStreamEvent::isFunctionCallArgumentsDone)
          .extracting(e -> e.asFunctionCallArgumentsDone().arguments()).containsExactly(EXEC_ARGS);
      assertThat(events).filteredOn(ResponseStreamEvent::isCustomToolCallInputDone)
          .extracting(e -> e.asCustomToolCallInputDone().input()).containsExactly(PATCH);
      List<ResponseOutputItem> done = events.stream().filter(ResponseStreamEvent::isOutputItemDone)
          .map(e -> e.asOutputItemDone().item()).toList();
      assertThat(done.get(1).asFunctionCall().name()).isEqualTo("exec_command");
      assertThat(done.get(2).asCustomToolCall().input()).isEqualTo(PATCH);
      ResponseStreamEvent last = events.get(events.size() - 1);
      assertThat(last.isCompleted()).isTrue();
      Response completed = last.asCompleted().response();
      assertThat(completed.output()).hasSize(3);
      assertThat(completed.usage().orElseThrow().totalTokens()).isEqualTo(1240);
    }
  }

  @ParameterizedTest(name = "{0} key, local.kind {2}")
  @MethodSource("tiersAndKinds")
  void theNextTurnsCarryEachToolOutputToItsCall(String tier, String key, String kind) {
    try (GatewayHarness h = start(kind)) {
      h.openAi(key).responses().create(params("turn-with-function-call-output"));
      JsonNode functionTurn = onlyBody(h, localPath(kind)).path("messages");
      h.ollama.resetRequests();
      h.openAi(key).responses().create(params("turn-with-custom-tool-call-output"));
      JsonNode customTurn = onlyBody(h, localPath(kind)).path("messages");

      assertCallThenOutput(functionTurn, kind, "call_1", "exec_command", "hello-from-tool");
      assertCallThenOutput(customTurn, kind, "call_2", "apply_patch", "Success. Updated the following files");
      JsonNode patchCall = customTurn.get(customTurn.size() - 2).path("tool_calls").get(0).path("function");
      String input = kind.equals("ollama") ? patchCall.path("arguments").path("input").asText()
          : Json.MAPPER.readTree(patchCall.path("arguments").asText()).path("input").asText();
      assertThat(input).isEqualTo(PATCH);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @ParameterizedTest(name = "local.kind {0}")
  @org.junit.jupiter.params.provider.ValueSource(strings = {"ollama", "openai"})
  void withTheBreakerForcedOpenTheWireCarriesNamedEventsNumberedInOrder(String kind) throws IOException {
    try (GatewayHarness h = start(kind)) {
      HttpResponse<String> forced = h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
          .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString("{\"state\":\"open\"}")).build());
      assertThat(forced.statusCode()).isEqualTo(200);

      HttpResponse<String> response = h.post("/v1/responses", GatewayHarness.SILVER_KEY,
          Json.toString(fixture("first-turn")), "Accept", "text/event-stream");

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(response.headers().firstValue("content-type").orElseThrow()).startsWith("text/event-stream");
      List<String> names = new java.util.ArrayList<>();
      int sequence = 0;
      for (String block : response.body().split("\n\n")) {
        if (block.isBlank()) {
          continue;
        }
        String[] lines = block.split("\n");
        assertThat(lines[0]).startsWith("event: ");
        assertThat(lines[1]).startsWith("data: ");
        String name = lines[0].substring("event: ".length());
        JsonNode data = Json.parse(lines[1].substring("data: ".length()));
        assertThat(data.path("type").asText()).isEqualTo(name);
        assertThat(data.path("sequence_number").asInt()).isEqualTo(sequence++);
        names.add(name);
      }
      assertThat(names).containsExactly("response.created", "response.in_progress",
          "response.output_item.added", "response.content_part.added",
          "response.output_text.delta", "response.output_text.delta",
          "response.output_text.done", "response.content_part.done", "response.output_item.done",
          "response.output_item.added", "response.function_call_arguments.delta",
          "response.function_call_arguments.done", "response.output_item.done",
          "response.output_item.added", "response.custom_tool_call_input.delta",
          "response.custom_tool_call_input.done", "response.output_item.done",
          "response.completed");
      h.cloud.verify(0, postRequestedFor(urlEqualTo("/v1/responses")));
    }
  }

  private static void assertCallThenOutput(JsonNode messages, String kind, String callId, String tool, String output) {
    JsonNode call = messages.get(messages.size() - 2);
    JsonNode result = messages.get(messages.size() - 1);
    assertThat(call.path("role").asText()).isEqualTo("assistant");
    assertThat(call.path("tool_calls").get(0).path("id").asText()).isEqualTo(callId);
    assertThat(call.path("tool_calls").get(0).path("function").path("name").asText()).isEqualTo(tool);
    assertThat(result.path("role").asText()).isEqualTo("tool");
    assertThat(result.path("tool_call_id").asText()).isEqualTo(callId);
    assertThat(result.path("content").asText()).contains(output);
    if (kind.equals("ollama")) {
      assertThat(result.path("tool_name").asText()).isEqualTo(tool);
    }
  }

  private static JsonNode onlyBody(GatewayHarness h, String path) {
    List<LoggedRequest> requests = h.ollama.findAll(postRequestedFor(urlEqualTo(path)));
    assertThat(requests).hasSize(1);
    try {
      return Json.parse(requests.get(0).getBodyAsString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
