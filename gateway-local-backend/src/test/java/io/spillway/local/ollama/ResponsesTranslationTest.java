package io.spillway.local.ollama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Unsupported;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ResponsesTranslation} alone: the Responses API ⇄ Ollama's {@code /api/chat}. */
class ResponsesTranslationTest {
  static final String REQUEST = """
      {"model":"gpt-5-codex","instructions":"You are a coding agent.","stream":true,"tool_choice":"required",
       "reasoning":{"effort":"low"},
       "tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{}}}],
       "input":[{"role":"user","content":[{"type":"input_text","text":"List files"}]},
         {"type":"function_call","call_id":"call_1","name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}"},
         {"type":"function_call_output","call_id":"call_1","output":"a.txt"}]}""";

  static ObjectNode json(String text) throws Exception {
    return (ObjectNode) Json.parse(text);
  }

  @Test
  void requestIsTheConversationInOllamasSpellingWithWhatItCannotHonourDropped() throws Exception {
    ResponsesTranslation translation = new ResponsesTranslation(json(REQUEST), "1200s", 16384);
    Unsupported unsupported = new Unsupported();

    ObjectNode sent = translation.request("qwen2.5-coder:7b", unsupported);

    assertThat(sent.path("messages").toString()).isEqualTo("["
        + "{\"role\":\"system\",\"content\":\"You are a coding agent.\"},"
        + "{\"role\":\"user\",\"content\":\"List files\"},"
        + "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_1\","
        + "\"function\":{\"name\":\"exec_command\",\"arguments\":{\"cmd\":\"ls\"}}}]},"
        + "{\"role\":\"tool\",\"content\":\"a.txt\",\"tool_name\":\"exec_command\",\"tool_call_id\":\"call_1\"}]");
    assertThat(sent.at("/tools/0/function/name").asText()).isEqualTo("exec_command");
    assertThat(sent.at("/options/num_ctx").asInt()).isEqualTo(16384);
    assertThat(sent.path("stream").asBoolean()).isTrue();
    assertThat(unsupported.isEmpty()).isTrue();
    assertThat(translation.dropped()).containsExactly("reasoning", "tool_choice");
    assertThat(translation.api()).isEqualTo("Responses API");
  }

  @Test
  void storedStateIsUnsupported() throws Exception {
    Unsupported unsupported = new Unsupported();

    new ResponsesTranslation(json("{\"previous_response_id\":\"resp_1\",\"input\":\"go on\"}"), "1s", null)
        .request("m", unsupported);

    assertThat(unsupported.isEmpty()).isFalse();
  }

  @Test
  void wholeAnswerIsAResponseWithTheCallAsAFunctionCallItem() throws Exception {
    ResponsesTranslation translation = new ResponsesTranslation(json(REQUEST), "1s", null);
    translation.request("qwen2.5-coder:7b", new Unsupported());

    ObjectNode response = translation.answer(json("""
        {"model":"qwen2.5-coder:7b","done":true,"done_reason":"stop","prompt_eval_count":30,"eval_count":9,
         "message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"exec_command",
           "arguments":{"cmd":"cat a.txt"}}}]}}"""), "fallback", 5L);

    assertThat(response.path("object").asText()).isEqualTo("response");
    assertThat(response.path("status").asText()).isEqualTo("completed");
    assertThat(response.path("model").asText()).isEqualTo("qwen2.5-coder:7b");
    assertThat(response.at("/output/0/type").asText()).isEqualTo("function_call");
    assertThat(response.at("/output/0/arguments").asText()).isEqualTo("{\"cmd\":\"cat a.txt\"}");
    assertThat(response.at("/usage/total_tokens").asLong()).isEqualTo(39);
  }

  @Test
  void streamIsTheTypedEventsEndingInResponseIncompleteWhenCut() throws Exception {
    ResponsesTranslation translation = new ResponsesTranslation(json(REQUEST), "1s", null);
    translation.request("qwen2.5-coder:7b", new Unsupported());
    StreamTranslator stream = translation.streamTranslator("qwen2.5-coder:7b", 5L);

    List<SseEvent> events = new ArrayList<>();
    events.addAll(stream.line(json("{\"message\":{\"content\":\"Sure\"},\"done\":false}")));
    ObjectNode done = json("{\"message\":{\"content\":\"\"},\"done\":true,\"done_reason\":\"length\"}");
    events.addAll(stream.line(done));
    events.addAll(stream.end(done));

    assertThat(events.stream().map(SseEvent::event)).startsWith("response.created", "response.in_progress")
        .contains("response.output_text.delta").endsWith("response.incomplete");
  }
}
