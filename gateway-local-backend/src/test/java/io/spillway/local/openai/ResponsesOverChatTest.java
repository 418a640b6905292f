package io.spillway.local.openai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.local.ollama.OllamaTesting.data;
import static io.spillway.local.ollama.OllamaTesting.drain;
import static io.spillway.local.ollama.OllamaTesting.json;
import static io.spillway.local.ollama.OllamaTesting.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.CodexFixtures;
import io.spillway.local.DroppedParams;
import io.spillway.local.ollama.OllamaTesting;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.spillway.server.testing.EventLoopClient;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code local.kind: openai} with a server that has only {@code /v1/chat/completions} (vLLM,
 * llama.cpp): Responses requests, tools included, are translated to chat completions and the
 * answers back to Responses output items and events.
 */
@ExtendWith(EventLoopClient.class)
class ResponsesOverChatTest {
  @RegisterExtension
  static WireMockExtension server =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  static final String MODEL = "Qwen/Qwen2.5-Coder-7B-Instruct";
  static final String EXEC = """
      {"type":"function","name":"exec_command","description":"Runs a command.",
       "parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}""";
  static final String APPLY_PATCH = "{\"type\":\"custom\",\"name\":\"apply_patch\",\"description\":\"Edits files.\"}";

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();

  OpenAiLocalBackend backend(LocalConfig.ResponsesApi responsesApi) {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", MODEL);
    LocalConfig config = new LocalConfig(true, LocalConfig.Kind.OPENAI, server.baseUrl(), models, null, null,
        Duration.ofSeconds(10), null, responsesApi);
    return new OpenAiLocalBackend(config, OllamaTesting.cloud(), clock, meters, EventLoopClient.http());
  }

  static JsonNode sentChatBody() {
    try {
      return Json.parse(server.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).get(0).getBodyAsString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static ResponseDefinitionBuilder completion(String messageJson, String finishReason) {
    return aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody("""
        {"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"%s",
         "choices":[{"index":0,"message":%s,"finish_reason":"%s"}],
         "usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}""".formatted(MODEL, messageJson, finishReason));
  }

  static ResponseDefinitionBuilder sse(String... chunks) {
    StringBuilder body = new StringBuilder();
    for (String chunk : chunks) {
      body.append("data: ").append(chunk).append("\n\n");
    }
    body.append("data: [DONE]\n\n");
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body.toString());
  }

  static String chunk(String delta, String finishReason) {
    return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"" + MODEL
        + "\",\"choices\":[{\"index\":0,\"delta\":" + delta + ",\"finish_reason\":"
        + (finishReason == null ? "null" : "\"" + finishReason + "\"") + "}]}";
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
    "first-turn                        | tools.custom.format,tools.tool_search,tools.web_search,text.verbosity,reasoning",
    "first-turn-gpt-4o-mini            | tools.web_search,reasoning",
    "turn-with-function-call-output    | tools.custom.format,tools.tool_search,tools.web_search,text.verbosity,reasoning",
    "turn-with-custom-tool-call-output | tools.custom.format,tools.tool_search,tools.web_search,text.verbosity,reasoning"
  })
  void codexRequestsBecomeTheseExactChatCompletionsBodies(String fixture, String dropped) throws IOException {
    server.stubFor(post("/v1/chat/completions").willReturn(sse(chunk("{\"role\":\"assistant\",\"content\":\"ok\"}", "stop"))));

    GatewayResponse response = Blocking.await(backend(null).callAsync(request(Route.RESPONSES, CodexFixtures.read(fixture + ".json"))));
    drain(response);

    assertThat(sentChatBody()).isEqualTo(Json.parse(CodexFixtures.read(fixture + ".chat.json")));
    assertThat(response.headers().get(DroppedParams.HEADER)).isEqualTo(dropped);
    assertThat(meters.get("spillway.local.dropped.requests").counter().count()).isEqualTo(1);
  }

  @Test
  void callsAndOutputsInTheInputBecomeAssistantToolCallsAndToolMessages() {
    server.stubFor(post("/v1/chat/completions").willReturn(completion("{\"role\":\"assistant\",\"content\":\"ok\"}", "stop")));

    Blocking.await(backend(null).callAsync(request(Route.RESPONSES, """
        {"model":"gpt-5.5","instructions":"Be brief.","tools":[%s,%s],"tool_choice":"required","top_k":20,
         "parallel_tool_calls":false,"max_output_tokens":500,"input":[
          {"role":"user","content":[{"type":"input_text","text":"Look"},
                                    {"type":"input_image","image_url":"https://example.com/a.png"}]},
          {"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}"},
          {"type":"function_call_output","call_id":"call_1","output":"a.txt"},
          {"type":"custom_tool_call","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch\\n"},
          {"type":"custom_tool_call_output","call_id":"call_2","output":"Done."}]}""".formatted(EXEC, APPLY_PATCH))));

    JsonNode sent = sentChatBody();
    assertThat(sent.path("messages").toString()).isEqualTo("["
        + "{\"role\":\"system\",\"content\":\"Be brief.\"},"
        + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Look\"},"
        + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/a.png\"}}]},"
        + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
        + "\"function\":{\"name\":\"exec_command\",\"arguments\":\"{\\\"cmd\\\":\\\"ls\\\"}\"}}]},"
        + "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"a.txt\"},"
        + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_2\",\"type\":\"function\","
        + "\"function\":{\"name\":\"apply_patch\",\"arguments\":\"{\\\"input\\\":\\\"*** Begin Patch\\\\n\\\"}\"}}]},"
        + "{\"role\":\"tool\",\"tool_call_id\":\"call_2\",\"content\":\"Done.\"}]");
    assertThat(sent.path("tool_choice").asText()).isEqualTo("required");
    assertThat(sent.path("parallel_tool_calls").asBoolean()).isFalse();
    assertThat(sent.path("max_tokens").asInt()).isEqualTo(500);
    assertThat(sent.path("top_k").asInt()).as("fields Responses does not define pass through").isEqualTo(20);
    assertThat(sent.has("input")).isFalse();
    assertThat(sent.has("stream")).isFalse();
  }

  @Test
  void aNamedToolIsForcedAsChatCompletionsSaysIt() {
    server.stubFor(post("/v1/chat/completions").willReturn(completion("{\"role\":\"assistant\",\"content\":\"ok\"}", "stop")));

    Blocking.await(backend(null).callAsync(request(Route.RESPONSES, "{\"model\":\"gpt-5.5\",\"input\":\"x\",\"tools\":[" + EXEC + ","
        + APPLY_PATCH + "],\"tool_choice\":{\"type\":\"custom\",\"name\":\"apply_patch\"}}")));

    JsonNode sent = sentChatBody();
    assertThat(sent.path("tool_choice").toString()).isEqualTo("{\"type\":\"function\",\"function\":{\"name\":\"apply_patch\"}}");
    assertThat(sent.path("tools")).hasSize(1);
  }

  @Test
  void toolCallsInAWholeAnswerComeBackAsOutputItems() {
    server.stubFor(post("/v1/chat/completions").willReturn(completion("""
        {"role":"assistant","content":"On it.","tool_calls":[
          {"id":"call_a","type":"function","function":{"name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}"}},
          {"id":"call_b","type":"function","function":{"name":"apply_patch","arguments":"{\\"input\\":\\"*** Begin Patch\\\\n\\"}"}}]}""",
        "tool_calls")));

    GatewayResponse response = Blocking.await(backend(null).callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-5.5\",\"input\":\"x\",\"tools\":[" + EXEC + "," + APPLY_PATCH + "]}")));

    JsonNode answer = json(response);
    assertThat(response.headers().get("content-type")).isEqualTo("application/json");
    assertThat(answer.path("object").asText()).isEqualTo("response");
    assertThat(answer.path("model").asText()).isEqualTo(MODEL);
    JsonNode output = answer.path("output");
    assertThat(output).extracting(item -> item.path("type").asText())
        .containsExactly("message", "function_call", "custom_tool_call");
    assertThat(output.get(1).path("call_id").asText()).isEqualTo("call_a");
    assertThat(output.get(1).path("arguments").asText()).isEqualTo("{\"cmd\":\"ls\"}");
    assertThat(output.get(2).path("call_id").asText()).isEqualTo("call_b");
    assertThat(output.get(2).path("input").asText()).isEqualTo("*** Begin Patch\n");
    assertThat(answer.path("usage").path("input_tokens").asInt()).isEqualTo(120);
    assertThat(answer.path("usage").path("output_tokens").asInt()).isEqualTo(30);
  }

  @Test
  void streamedChunksBecomeTypedEventsWithCallsWhoseArgumentsArrivedInPieces() {
    server.stubFor(post("/v1/chat/completions").willReturn(sse(
        chunk("{\"role\":\"assistant\",\"content\":\"\"}", null),
        chunk("{\"content\":\"Running\"}", null),
        chunk("{\"content\":\" it.\"}", null),
        chunk("{\"tool_calls\":[{\"index\":0,\"id\":\"call_x\",\"type\":\"function\",\"function\":{\"name\":"
            + "\"exec_command\",\"arguments\":\"\"}}]}", null),
        chunk("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"cmd\\\":\"}}]}", null),
        chunk("{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]}", null),
        chunk("{\"tool_calls\":[{\"index\":1,\"id\":\"call_y\",\"type\":\"function\",\"function\":{\"name\":"
            + "\"exec_command\",\"arguments\":\"{\\\"cmd\\\":\\\"pwd\\\"}\"}}]}", null),
        chunk("{}", "tool_calls"),
        "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"" + MODEL
            + "\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":9,\"total_tokens\":59}}")));

    GatewayResponse response = Blocking.await(backend(null).callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-5.5\",\"stream\":true,\"input\":\"x\",\"tools\":[" + EXEC + "]}")));
    List<SseEvent> events = drain(response);

    assertThat(sentChatBody().path("stream_options").toString()).isEqualTo("{\"include_usage\":true}");
    assertThat(response.headers().get("content-type")).isEqualTo("text/event-stream");
    assertThat(events).extracting(SseEvent::event).containsExactly(
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done",
        "response.completed");
    List<JsonNode> data = new ArrayList<>();
    events.forEach(e -> data.add(data(e)));
    assertThat(data.get(11).path("arguments").asText()).isEqualTo("{\"cmd\":\"ls\"}");
    assertThat(data.get(12).path("item").path("call_id").asText()).isEqualTo("call_x");
    assertThat(data.get(16).path("item").path("call_id").asText()).isEqualTo("call_y");
    assertThat(data.get(16).path("output_index").asInt()).isEqualTo(2);
    JsonNode completed = data.get(17).path("response");
    assertThat(completed.path("usage").path("total_tokens").asInt()).isEqualTo(59);
    assertThat(completed.path("output")).hasSize(3);
  }

  @Test
  void aServerThatIgnoresStreamStillGivesTheClientItsEvents() {
    server.stubFor(post("/v1/chat/completions").willReturn(completion("""
        {"role":"assistant","content":null,"tool_calls":[
          {"id":"call_a","type":"function","function":{"name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}"}}]}""",
        "tool_calls")));

    GatewayResponse response = Blocking.await(backend(null).callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-5.5\",\"stream\":true,\"input\":\"x\",\"tools\":[" + EXEC + "]}")));

    assertThat(response.isStream()).isTrue();
    assertThat(drain(response)).extracting(SseEvent::event).containsExactly(
        "response.created", "response.in_progress", "response.output_item.added",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done", "response.completed");
  }

  @Test
  void aStreamThatEndsBeforeItsFinishFailsInsteadOfLookingComplete() {
    server.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "text/event-stream")
        .withBody("data: " + chunk("{\"content\":\"Half\"}", null) + "\n\n")));

    GatewayResponse response = Blocking.await(backend(null).callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-5.5\",\"stream\":true,\"input\":\"x\"}")));

    assertThatThrownBy(() -> drain(response)).isInstanceOf(GatewayException.class)
        .hasMessageContaining("before it was complete");
  }

  @Test
  void previousResponseIdIsRefusedAsUnsupportedOnLocal() {
    assertThatThrownBy(() -> Blocking.await(backend(null).callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-5.5\",\"input\":\"x\",\"previous_response_id\":\"resp_1\"}"))))
        .isInstanceOfSatisfying(UnsupportedOnLocalException.class, e -> {
          assertThat(e.code()).isEqualTo("unsupported_on_local");
          assertThat(e.param()).isEqualTo("previous_response_id");
          // The bare refusal: the router decides status and Retry-After from the breaker.
          assertThat(e.status()).isEqualTo(400);
          assertThat(e.retryAfter()).isNull();
        });
    assertThat(server.getAllServeEvents()).isEmpty();
  }

  @Test
  void nativeModeForwardsTheResponsesRequestAsItIs() {
    server.stubFor(post("/v1/responses").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "application/json").withBody("{\"object\":\"response\",\"output\":[]}")));

    GatewayResponse response = Blocking.await(backend(LocalConfig.ResponsesApi.NATIVE).callAsync(request(Route.RESPONSES,
        "{\"model\":\"gpt-5.5\",\"input\":\"x\",\"tools\":[{\"type\":\"web_search\"}]}")));

    assertThat(response.status()).isEqualTo(200);
    server.verify(1, postRequestedFor(urlEqualTo("/v1/responses")));
    server.verify(0, postRequestedFor(urlEqualTo("/v1/chat/completions")));
  }
}
