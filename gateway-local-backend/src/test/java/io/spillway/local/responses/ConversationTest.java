package io.spillway.local.responses;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.local.Unsupported;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Reading a Responses request as a chat conversation, without any server. */
class ConversationTest {
  final List<String> dropped = new ArrayList<>();
  final Unsupported unsupported = new Unsupported();

  Conversation parse(String json) {
    try {
      return Conversation.parse((ObjectNode) Json.parse(json), dropped::add, unsupported);
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
  }

  @Test
  void aNamespacedToolThatClashesWithAPlainOneGetsItsOwnName() {
    Conversation conversation = parse("""
        {"input":"x","tools":[{"type":"function","name":"ns__run"},
          {"type":"namespace","name":"ns","tools":[{"type":"function","name":"run"},{"type":"web_search"}]}]}""");

    assertThat(conversation.tools().all()).extracting(LocalTool::localName).containsExactly("ns__run", "ns__run_2");
    assertThat(conversation.tools().byLocalName("ns__run_2").namespace()).isEqualTo("ns");
    assertThat(conversation.tools().byLocalName("ns__run").namespace()).isNull();
    assertThat(dropped).containsExactly("tools.web_search");
  }

  @Test
  void aCustomToolsInputIsTakenFromItsArgumentsOrIsTheArgumentsWhenTheModelIgnoredTheSchema() {
    assertThat(LocalTool.customInput("{\"input\":\"*** Begin Patch\\n\"}")).isEqualTo("*** Begin Patch\n");
    assertThat(LocalTool.customInput("\"raw text\"")).isEqualTo("raw text");
    assertThat(LocalTool.customInput("*** Begin Patch")).isEqualTo("*** Begin Patch");
    assertThat(LocalTool.customInput("{\"patch\":\"x\"}")).isEqualTo("{\"patch\":\"x\"}");
  }

  @Test
  void toolOutputsInEveryFormKeepTheirCallIdAndFindTheirTool() {
    Conversation conversation = parse("""
        {"input":[
          {"type":"function_call","call_id":"c1","name":"view_image","arguments":{"path":"a.png"}},
          {"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"the image:"},
            {"type":"input_image","image_url":"data:image/png;base64,AAAA"}]},
          {"type":"function_call_output","call_id":"c0","output":{"content":"failed","success":false}}]}""");

    List<ChatMessage> messages = conversation.messages();
    assertThat(messages.get(0).toolCalls()).containsExactly(new ToolCall("c1", "view_image", "{\"path\":\"a.png\"}"));
    assertThat(messages.get(1)).isEqualTo(new ChatMessage("tool", "the image:",
        List.of("data:image/png;base64,AAAA"), List.of(), "c1", "view_image"));
    assertThat(messages.get(2)).isEqualTo(new ChatMessage("tool", "failed", List.of(), List.of(), "c0", null));
    assertThat(unsupported.isEmpty()).isTrue();
  }

  @Test
  void leadingSystemMessagesAreJoinedAndLaterOnesKeepTheirPlace() {
    Conversation conversation = parse("""
        {"instructions":"A","input":[{"role":"developer","content":"B"},{"role":"user","content":"hi"},
          {"role":"developer","content":"C"}]}""");

    assertThat(conversation.messages()).extracting(ChatMessage::role, ChatMessage::text)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("system", "A\n\nB"),
            org.assertj.core.groups.Tuple.tuple("user", "hi"), org.assertj.core.groups.Tuple.tuple("system", "C"));
  }

  @Test
  void imagesOutsideUserMessagesAndFileIdsCannotBeServed() {
    parse("""
        {"input":[{"role":"assistant","content":[{"type":"input_image","image_url":"data:image/png;base64,AAAA"}]},
          {"role":"user","content":[{"type":"input_image","file_id":"file_1"}]}]}""");

    assertThatThrownBy(() -> unsupported.throwIfAny("Responses API"))
        .hasMessageContaining("images in assistant messages").hasMessageContaining("file_id");
  }

  @Test
  void aCallWithoutItsCallIdIsABadRequest() {
    assertThatThrownBy(() -> parse("{\"input\":[{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}]}"))
        .isInstanceOfSatisfying(GatewayException.class, e -> {
          assertThat(e.status()).isEqualTo(400);
          assertThat(e.param()).isEqualTo("input[0].call_id");
        });
  }
}
