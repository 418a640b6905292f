package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.local.ollama.OllamaTesting.drain;
import static io.spillway.local.ollama.OllamaTesting.json;
import static io.spillway.local.ollama.OllamaTesting.request;
import static io.spillway.local.ollama.OllamaTesting.sentBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.util.ArrayList;
import java.util.List;
import io.spillway.server.testing.EventLoopClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Responses API tools over Ollama: what the model is offered, how calls and their outputs in the
 * input are spelled for Ollama, and how the calls Ollama answers with come back as output items,
 * whole and streamed.
 */
@ExtendWith(EventLoopClient.class)
class OllamaResponsesToolsTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  static final String MODEL = "qwen2.5-coder:7b";
  static final String EXEC = """
      {"type":"function","name":"exec_command","description":"Runs a command.","strict":false,
       "parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}}""";
  static final String APPLY_PATCH = """
      {"type":"custom","name":"apply_patch","description":"Edits files.",
       "format":{"type":"grammar","syntax":"lark","definition":"start: begin_patch hunk+ end_patch"}}""";
  static final String NAMESPACE = """
      {"type":"namespace","name":"multi_agent_v1","description":"Sub-agents.","tools":[
        {"type":"function","name":"spawn_agent","description":"Spawn one.",
         "parameters":{"type":"object","properties":{"task":{"type":"string"}}}}]}""";

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final OllamaBackend backend = OllamaTesting.backend(ollama.baseUrl(), clock);

  static String body(boolean stream, String tools, String extra) {
    return "{\"model\":\"gpt-5.5\",\"stream\":" + stream + ",\"input\":\"run ls\",\"tools\":[" + tools + "]"
        + extra + "}";
  }

  @Test
  void functionAndCustomToolsAreOfferedAndHostedToolsAreDroppedAndNamed() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat(MODEL, "ok", "stop", 5, 1)));
    GatewayRequest request = request(Route.RESPONSES, body(false, EXEC + "," + APPLY_PATCH
        + ",{\"type\":\"tool_search\",\"execution\":\"client\",\"parameters\":{\"type\":\"object\"}}"
        + ",{\"type\":\"web_search\",\"external_web_access\":false},{\"type\":\"file_search\",\"vector_store_ids\":[\"v\"]}",
        ",\"tool_choice\":\"auto\",\"parallel_tool_calls\":true,\"reasoning\":{\"summary\":\"auto\"},\"store\":false,"
            + "\"include\":[\"reasoning.encrypted_content\"],\"prompt_cache_key\":\"k\",\"client_metadata\":{\"a\":\"b\"}"));

    GatewayResponse response = Blocking.await(backend.callAsync(request));

    JsonNode tools = sentBody(ollama, "/api/chat").path("tools");
    assertThat(tools.toString()).isEqualTo("[{\"type\":\"function\",\"function\":{\"name\":\"exec_command\","
        + "\"description\":\"Runs a command.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"cmd\":"
        + "{\"type\":\"string\"}},\"required\":[\"cmd\"]}}},"
        + "{\"type\":\"function\",\"function\":{\"name\":\"apply_patch\",\"description\":\"Edits files.\\n\\nCall it "
        + "with one argument, 'input': the raw text this tool takes, not JSON.\",\"parameters\":{\"type\":\"object\","
        + "\"properties\":{\"input\":{\"type\":\"string\",\"description\":\"The raw input. It must follow this lark "
        + "grammar:\\nstart: begin_patch hunk+ end_patch\"}},\"required\":[\"input\"]}}}]");
    String dropped = "tools.custom.format,tools.tool_search,tools.web_search,tools.file_search,reasoning";
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isEqualTo(dropped);
    assertThat(RequestOutcome.of(request).droppedParams()).containsExactly(dropped.split(","));
  }

  @Test
  void callsAndTheirOutputsInTheInputKeepTheirCallIdsAndNameTheirTool() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat(MODEL, "done", "stop", 5, 1)));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.RESPONSES, """
        {"model":"gpt-5.5","instructions":"Be brief.","tools":[%s,%s,%s],"input":[
          {"type":"message","role":"developer","content":[{"type":"input_text","text":"Rules."}]},
          {"type":"message","role":"user","content":[{"type":"input_text","text":"Fix it"}]},
          {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"SECRET PLAN"}],"encrypted_content":"x"},
          {"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking."}]},
          {"type":"function_call","id":"fc_1","call_id":"call_1","name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}"},
          {"type":"function_call","id":"fc_2","call_id":"call_2","name":"spawn_agent","namespace":"multi_agent_v1","arguments":"{}"},
          {"type":"function_call_output","call_id":"call_1","output":"a.txt"},
          {"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"agent 7"}]},
          {"type":"custom_tool_call","id":"ctc_1","call_id":"call_3","name":"apply_patch","input":"*** Begin Patch\\n*** End Patch\\n"},
          {"type":"custom_tool_call_output","call_id":"call_3","output":"Success."},
          {"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}}
        ]}""".formatted(EXEC, APPLY_PATCH, NAMESPACE))));

    assertThat(sentBody(ollama, "/api/chat").path("messages").toString()).isEqualTo("["
        + "{\"role\":\"system\",\"content\":\"Be brief.\\n\\nRules.\"},"
        + "{\"role\":\"user\",\"content\":\"Fix it\"},"
        + "{\"role\":\"assistant\",\"content\":\"Looking.\",\"tool_calls\":["
        + "{\"id\":\"call_1\",\"function\":{\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"ls\"}}},"
        + "{\"id\":\"call_2\",\"function\":{\"name\":\"multi_agent_v1__spawn_agent\",\"arguments\":{}}}]},"
        + "{\"role\":\"tool\",\"content\":\"a.txt\",\"tool_name\":\"exec_command\",\"tool_call_id\":\"call_1\"},"
        + "{\"role\":\"tool\",\"content\":\"agent 7\",\"tool_name\":\"multi_agent_v1__spawn_agent\","
        + "\"tool_call_id\":\"call_2\"},"
        + "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_3\",\"function\":{\"name\":"
        + "\"apply_patch\",\"arguments\":{\"input\":\"*** Begin Patch\\n*** End Patch\\n\"}}}]},"
        + "{\"role\":\"tool\",\"content\":\"Success.\",\"tool_name\":\"apply_patch\",\"tool_call_id\":\"call_3\"}]");
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER))
        .isEqualTo("tools.custom.format,input.reasoning,input.web_search_call");
  }

  @Test
  void oneToolCallComesBackAsAFunctionCallItem() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chatWithCalls(MODEL, "",
        "[{\"id\":\"call_ollama1\",\"function\":{\"index\":0,\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"ls -la\"}}}]")));

    JsonNode answer = json(Blocking.await(backend.callAsync(request(Route.RESPONSES, body(false, EXEC, "")))));

    assertThat(answer.path("status").asText()).isEqualTo("completed");
    assertThat(answer.path("output")).hasSize(1);
    JsonNode call = answer.path("output").get(0);
    assertThat(call.path("type").asText()).isEqualTo("function_call");
    assertThat(call.path("id").asText()).startsWith("fc_");
    assertThat(call.path("call_id").asText()).isEqualTo("call_ollama1");
    assertThat(call.path("name").asText()).isEqualTo("exec_command");
    assertThat(call.path("arguments").asText()).isEqualTo("{\"cmd\":\"ls -la\"}");
    assertThat(call.path("status").asText()).isEqualTo("completed");
    assertThat(call.has("namespace")).isFalse();
    assertThat(answer.path("usage").path("total_tokens").asInt()).isEqualTo(155);
    assertThat(answer.path("tools").get(0).path("name").asText()).isEqualTo("exec_command");
  }

  @Test
  void severalCallsInOneTurnComeBackInOrderAfterTheText() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chatWithCalls(MODEL, "Two things.",
        "[{\"function\":{\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"ls\"}}},"
            + "{\"function\":{\"name\":\"apply_patch\",\"arguments\":{\"input\":\"*** Begin Patch\\n*** End Patch\\n\"}}},"
            + "{\"function\":{\"name\":\"multi_agent_v1__spawn_agent\",\"arguments\":{\"task\":\"t\"}}}]")));

    JsonNode output = json(Blocking.await(backend.callAsync(request(Route.RESPONSES, body(false, EXEC + "," + APPLY_PATCH + "," + NAMESPACE, "")))))
        .path("output");

    assertThat(output).extracting(item -> item.path("type").asText())
        .containsExactly("message", "function_call", "custom_tool_call", "function_call");
    assertThat(output.get(0).path("content").get(0).path("text").asText()).isEqualTo("Two things.");
    assertThat(output.get(1).path("call_id").asText()).startsWith("call_");
    JsonNode custom = output.get(2);
    assertThat(custom.path("id").asText()).startsWith("ctc_");
    assertThat(custom.path("name").asText()).isEqualTo("apply_patch");
    assertThat(custom.path("input").asText()).isEqualTo("*** Begin Patch\n*** End Patch\n");
    assertThat(custom.has("arguments")).isFalse();
    JsonNode namespaced = output.get(3);
    assertThat(namespaced.path("name").asText()).isEqualTo("spawn_agent");
    assertThat(namespaced.path("namespace").asText()).isEqualTo("multi_agent_v1");
    assertThat(namespaced.path("arguments").asText()).isEqualTo("{\"task\":\"t\"}");
    List<String> callIds = new ArrayList<>();
    output.forEach(item -> callIds.add(item.path("call_id").asText()));
    assertThat(callIds.subList(1, 4)).doesNotHaveDuplicates();
  }

  @Test
  void streamedCallsFollowOpenAisEventSequence() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(OllamaStubs.chatStreamWithCalls(MODEL,
        "[{\"function\":{\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"ls\"}}},"
            + "{\"function\":{\"name\":\"apply_patch\",\"arguments\":{\"input\":\"*** Begin Patch\\n\"}}}]",
        "Let me", " check."))));

    List<SseEvent> events = drain(Blocking.await(backend.callAsync(request(Route.RESPONSES, body(true, EXEC + "," + APPLY_PATCH, "")))));

    assertThat(events).extracting(SseEvent::event).containsExactly(
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done",
        "response.output_item.added", "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done", "response.output_item.done",
        "response.completed");
    List<JsonNode> data = events.stream().map(OllamaTesting::data).toList();
    for (int i = 0; i < data.size(); i++) {
      assertThat(data.get(i).path("sequence_number").asInt()).isEqualTo(i);
      assertThat(data.get(i).path("type").asText()).isEqualTo(events.get(i).event());
    }
    assertThat(data.subList(2, 9)).allMatch(d -> d.path("output_index").asInt() == 0);
    assertThat(data.subList(9, 13)).allMatch(d -> d.path("output_index").asInt() == 1);
    assertThat(data.subList(13, 17)).allMatch(d -> d.path("output_index").asInt() == 2);

    JsonNode added = data.get(9).path("item");
    assertThat(added.path("type").asText()).isEqualTo("function_call");
    assertThat(added.path("status").asText()).isEqualTo("in_progress");
    assertThat(added.path("arguments").asText()).isEmpty();
    assertThat(data.get(10).path("item_id").asText()).isEqualTo(added.path("id").asText());
    assertThat(data.get(10).path("delta").asText()).isEqualTo("{\"cmd\":\"ls\"}");
    assertThat(data.get(11).path("arguments").asText()).isEqualTo("{\"cmd\":\"ls\"}");
    assertThat(data.get(11).path("name").asText()).isEqualTo("exec_command");
    JsonNode callDone = data.get(12).path("item");
    assertThat(callDone.path("status").asText()).isEqualTo("completed");
    assertThat(callDone.path("call_id").asText()).isEqualTo(added.path("call_id").asText());
    assertThat(data.get(14).path("delta").asText()).isEqualTo("*** Begin Patch\n");
    assertThat(data.get(15).path("input").asText()).isEqualTo("*** Begin Patch\n");
    assertThat(data.get(16).path("item").path("type").asText()).isEqualTo("custom_tool_call");

    JsonNode completed = data.get(17).path("response");
    assertThat(completed.path("output")).extracting(item -> item.path("type").asText())
        .containsExactly("message", "function_call", "custom_tool_call");
    assertThat(completed.path("output").get(0).path("content").get(0).path("text").asText()).isEqualTo("Let me check.");
    assertThat(completed.path("output").get(1)).isEqualTo(callDone);
    assertThat(completed.path("usage").path("output_tokens").asInt()).isEqualTo(33);
  }

  @Test
  void aStreamedAnswerThatOnlyCallsAToolHasNoMessageItem() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        OllamaStubs.chatStreamToolCallBody(MODEL, "exec_command", "{\"cmd\":\"pwd\"}"))));

    List<SseEvent> events = drain(Blocking.await(backend.callAsync(request(Route.RESPONSES, body(true, EXEC, "")))));

    assertThat(events).extracting(SseEvent::event).containsExactly(
        "response.created", "response.in_progress", "response.output_item.added",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done", "response.completed");
    JsonNode completed = OllamaTesting.data(events.get(6)).path("response");
    assertThat(completed.path("output")).hasSize(1);
    assertThat(OllamaTesting.data(events.get(2)).path("output_index").asInt()).isZero();
  }

  @ParameterizedTest(name = "tool_choice {0}")
  @CsvSource(delimiter = '|', value = {
    "'\"none\"'                                              | ''                                      | ''",
    "'\"auto\"'                                              | exec_command,apply_patch                | ''",
    "'\"required\"'                                          | exec_command,apply_patch                | tool_choice",
    "'{\"type\":\"function\",\"name\":\"exec_command\"}'     | exec_command                            | ''",
    "'{\"type\":\"custom\",\"name\":\"apply_patch\"}'        | apply_patch                             | ''",
    "'{\"type\":\"allowed_tools\",\"mode\":\"auto\",\"tools\":[{\"type\":\"custom\",\"name\":\"apply_patch\"}]}' | apply_patch | ''",
    "'{\"type\":\"web_search_preview\"}'                     | exec_command,apply_patch                | tool_choice",
    "'{\"type\":\"function\",\"name\":\"not_offered\"}'      | exec_command,apply_patch                | tool_choice"
  })
  void toolChoiceIsHonouredWhereOllamaCanAndNamedAsDroppedWhereItCannot(
      String choice, String offered, String dropped) {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat(MODEL, "ok", "stop", 5, 1)));
    String apply = "{\"type\":\"custom\",\"name\":\"apply_patch\",\"description\":\"Edits files.\"}";

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.RESPONSES,
        body(false, EXEC + "," + apply, ",\"tool_choice\":" + choice))));

    List<String> sent = new ArrayList<>();
    sentBody(ollama, "/api/chat").path("tools").forEach(t -> sent.add(t.path("function").path("name").asText()));
    assertThat(String.join(",", sent)).isEqualTo(offered);
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isEqualTo(dropped.isEmpty() ? null : dropped);
  }
}
