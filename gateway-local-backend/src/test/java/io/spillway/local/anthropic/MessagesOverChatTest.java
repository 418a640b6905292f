package io.spillway.local.anthropic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Unsupported;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Messages API written as chat completions, and chat answers told back in Anthropic's shapes. */
class MessagesOverChatTest {
  private static ObjectNode json(String text) {
    try {
      return (ObjectNode) Json.parse(text);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void systemBlocksToolUseAndToolResultBecomeChatMessagesInOrder() {
    MessagesAsChat translation = new MessagesAsChat(json("""
        {"model":"claude-sonnet-4-5","max_tokens":100,"temperature":0.2,"stop_sequences":["END"],
         "system":[{"type":"text","text":"Be terse."},{"type":"text","text":"Use tools."}],
         "tools":[{"name":"Bash","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],
         "tool_choice":{"type":"any"},
         "messages":[
          {"role":"user","content":"Run ls"},
          {"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"x"},
            {"type":"text","text":"Running."},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},
          {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.txt"}]},
            {"type":"text","text":"And now?"},
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]}]}"""));
    Unsupported unsupported = new Unsupported();

    ObjectNode chat = translation.request(unsupported);

    assertThat(unsupported.isEmpty()).isTrue();
    JsonNode messages = chat.get("messages");
    assertThat(messages.findValuesAsText("role")).containsExactly("system", "user", "assistant", "tool", "user");
    assertThat(messages.get(0).get("content").asText()).isEqualTo("Be terse.\n\nUse tools.");
    assertThat(messages.get(2).get("content").asText()).isEqualTo("Running.");
    assertThat(messages.get(2).at("/tool_calls/0/function/arguments").asText()).isEqualTo("{\"command\":\"ls\"}");
    assertThat(messages.get(3).get("tool_call_id").asText()).isEqualTo("toolu_1");
    assertThat(messages.get(3).get("content").asText()).isEqualTo("a.txt");
    assertThat(messages.get(4).at("/content/1/image_url/url").asText()).isEqualTo("data:image/png;base64,iVBO");
    assertThat(chat.get("tools")).hasSize(1);
    assertThat(chat.get("tool_choice").asText()).isEqualTo("required");
    assertThat(chat.get("stop").get(0).asText()).isEqualTo("END");
    assertThat(translation.dropped()).containsExactly("thinking", "tools.web_search");
  }

  @Test
  void aDocumentIsRefusedNamingTheMessagesApi() {
    MessagesAsChat translation = new MessagesAsChat(json("""
        {"model":"m","max_tokens":10,"messages":[{"role":"user","content":[
          {"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}"""));
    Unsupported unsupported = new Unsupported();
    translation.request(unsupported);

    assertThatThrownBy(() -> unsupported.throwIfAny(MessagesOverChat.API))
        .isInstanceOf(UnsupportedOnLocalException.class).hasMessageContaining("Messages API")
        .hasMessageContaining("documents");
  }

  @Test
  void aChatCompletionWithAToolCallBecomesAToolUseMessage() {
    ObjectNode message = ChatAsMessage.of(json("""
        {"model":"qwen","choices":[{"finish_reason":"tool_calls","message":{"content":null,"tool_calls":[
          {"id":"call_9","type":"function","function":{"name":"Bash","arguments":"{\\"command\\":\\"ls\\"}"}}]}}],
         "usage":{"prompt_tokens":12,"completion_tokens":3}}"""), "claude-sonnet-4-5");

    assertThat(message.get("type").asText()).isEqualTo("message");
    assertThat(message.get("stop_reason").asText()).isEqualTo("tool_use");
    assertThat(message.at("/content/0/type").asText()).isEqualTo("tool_use");
    assertThat(message.at("/content/0/id").asText()).isEqualTo("call_9");
    assertThat(message.at("/content/0/input/command").asText()).isEqualTo("ls");
    assertThat(message.at("/usage/input_tokens").asInt()).isEqualTo(12);
    assertThat(message.at("/usage/output_tokens").asInt()).isEqualTo(3);
  }

  @Test
  void chatChunksComeOutInAnthropicsStreamOrderWithOneBlockOpenAtATime() {
    MessageEvents events = new MessageEvents("claude-sonnet-4-5");
    List<SseEvent> all = new ArrayList<>();
    all.addAll(events.line(json("{\"model\":\"qwen\",\"choices\":[{\"delta\":{\"content\":\"Let me \"}}]}")));
    all.addAll(events.line(json("{\"choices\":[{\"delta\":{\"content\":\"check.\"}}]}")));
    all.addAll(events.line(json("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\","
        + "\"function\":{\"name\":\"Bash\",\"arguments\":\"{\\\"comm\"}}]}}]}")));
    all.addAll(events.line(json("{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,"
        + "\"function\":{\"arguments\":\"and\\\":\\\"ls\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}")));
    all.addAll(events.line(json("{\"choices\":[],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":9}}")));
    all.addAll(events.end(null));

    assertThat(all.stream().map(SseEvent::event).toList()).containsExactly("message_start", "ping",
        "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
        "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
        "message_delta", "message_stop");
    assertThat(json(all.get(6).data()).at("/content_block/type").asText()).isEqualTo("tool_use");
    assertThat(json(all.get(6).data()).get("index").asInt()).isEqualTo(1);
    assertThat(json(all.get(7).data()).at("/delta/type").asText()).isEqualTo("input_json_delta");
    ObjectNode delta = json(all.get(10).data());
    assertThat(delta.at("/delta/stop_reason").asText()).isEqualTo("tool_use");
    assertThat(delta.at("/usage/input_tokens").asInt()).isEqualTo(40);
    assertThat(delta.at("/usage/output_tokens").asInt()).isEqualTo(9);
  }
}
