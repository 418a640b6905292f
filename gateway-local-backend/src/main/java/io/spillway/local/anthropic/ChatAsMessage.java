package io.spillway.local.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.local.Ids;

/**
 * A whole {@code chat.completion} as Anthropic's {@code message}: its text as a text block, each
 * tool call as a {@code tool_use} block (the call's id kept, so the client's {@code tool_result}
 * finds it), the finish reason as {@code stop_reason}, the usage in Anthropic's names.
 */
final class ChatAsMessage {
  private ChatAsMessage() {}

  static ObjectNode of(JsonNode completion, String model) {
    JsonNode choice = completion.path("choices").path(0);
    JsonNode message = choice.path("message");
    ObjectNode out = MessageShape.start(Ids.next("msg_"), servedModel(completion, model));
    ArrayNode content = (ArrayNode) out.get("content");
    String text = Json.text(message, "content");
    if (text != null && !text.isEmpty()) {
      content.addObject().put("type", "text").put("text", text);
    }
    for (JsonNode call : message.path("tool_calls")) {
      ObjectNode block = content.addObject();
      block.put("type", "tool_use");
      String id = Json.text(call, "id");
      block.put("id", id != null && !id.isEmpty() ? id : Ids.next("toolu_"));
      block.put("name", call.path("function").path("name").asText());
      block.set("input", MessageShape.input(call.path("function").path("arguments").asText(null)));
    }
    String finish = Json.text(choice, "finish_reason");
    out.put("stop_reason", MessageShape.stopReason(
        finish == null && !message.path("tool_calls").isEmpty() ? "tool_calls" : finish));
    out.set("usage", MessageShape.usage(completion.get("usage")));
    return out;
  }

  static String servedModel(JsonNode answer, String fallback) {
    String served = answer == null ? null : Json.text(answer, "model");
    return served != null && !served.isEmpty() ? served : fallback;
  }
}
