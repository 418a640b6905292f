package io.spillway.local.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Unsupported;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ResponsesOverChat} and its stream translator alone, without a server. */
class ResponsesOverChatTranslationTest {
  static final String REQUEST = """
      {"model":"gpt-5-codex","stream":true,"max_output_tokens":200,"reasoning":{"effort":"low"},"seed":7,
       "tool_choice":"required",
       "tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{}}}],
       "input":"List files"}""";

  static ObjectNode json(String text) throws Exception {
    return (ObjectNode) Json.parse(text);
  }

  @Test
  void requestIsAChatCompletionsStreamWithUsageAndTheToolChoicePassedOn() throws Exception {
    ResponsesOverChat translation = new ResponsesOverChat(json(REQUEST));
    Unsupported unsupported = new Unsupported();

    ObjectNode chat = translation.request("Qwen/Qwen2.5-Coder-7B-Instruct", unsupported);

    assertThat(chat.path("model").asText()).isEqualTo("Qwen/Qwen2.5-Coder-7B-Instruct");
    assertThat(chat.path("messages").toString()).isEqualTo("[{\"role\":\"user\",\"content\":\"List files\"}]");
    assertThat(chat.path("tool_choice").asText()).isEqualTo("required");
    assertThat(chat.path("max_tokens").asInt()).isEqualTo(200);
    assertThat(chat.path("stream_options").path("include_usage").asBoolean()).isTrue();
    assertThat(chat.path("seed").asInt()).as("fields the Responses API does not define pass on").isEqualTo(7);
    assertThat(translation.dropped()).containsExactly("reasoning");
    assertThat(translation.stream()).isTrue();
    assertThat(unsupported.isEmpty()).isTrue();
  }

  @Test
  void streamedToolCallPiecesBecomeOneWholeFunctionCallWhenTheAnswerEnds() throws Exception {
    ResponsesOverChat translation = new ResponsesOverChat(json(REQUEST));
    translation.request("local-model", new Unsupported());
    StreamTranslator stream = translation.streamTranslator("local-model", 5L);

    List<SseEvent> events = new ArrayList<>();
    events.addAll(stream.line(json("{\"model\":\"served\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
        + "[{\"index\":0,\"id\":\"call_9\",\"function\":{\"name\":\"exec_command\",\"arguments\":\"{\\\"cmd\\\":\"}}]}}]}")));
    assertThat(stream.whole()).isFalse();
    events.addAll(stream.line(json("{\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":"
        + "[{\"index\":0,\"function\":{\"arguments\":\"\\\"ls\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}")));
    assertThat(stream.whole()).isTrue();
    events.addAll(stream.line(json("{\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5}}")));
    events.addAll(stream.end(null));

    SseEvent done = events.stream().filter(e -> "response.function_call_arguments.done".equals(e.event()))
        .findFirst().orElseThrow();
    assertThat(Json.parse(done.data()).path("arguments").asText()).isEqualTo("{\"cmd\":\"ls\"}");
    SseEvent completed = events.get(events.size() - 1);
    assertThat(completed.event()).isEqualTo("response.completed");
    assertThat(Json.parse(completed.data()).at("/response/model").asText()).isEqualTo("served");
    assertThat(Json.parse(completed.data()).at("/response/usage/total_tokens").asLong()).isEqualTo(17);
    assertThat(Json.parse(completed.data()).at("/response/output/0/call_id").asText()).isEqualTo("call_9");
  }

  @Test
  void aWholeAnswerToAStreamRequestIsToldAsTheEventsOfItsStream() throws Exception {
    ResponsesOverChat translation = new ResponsesOverChat(json(REQUEST));
    translation.request("local-model", new Unsupported());

    List<SseEvent> events = translation.answerAsEvents(json("""
        {"model":"served","choices":[{"index":0,"message":{"role":"assistant","content":"a.txt"},
          "finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}"""), "local-model", 5L);

    assertThat(events.stream().map(SseEvent::event)).startsWith("response.created")
        .contains("response.output_text.delta").endsWith("response.incomplete");
  }
}
