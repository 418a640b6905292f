package io.spillway.local.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.io.IOException;

/** The pieces of Anthropic's {@code message} object a chat completions answer is told in. */
final class MessageShape {
  private MessageShape() {}

  /** Anthropic's {@code stop_reason} for a chat completions {@code finish_reason}. */
  static String stopReason(String finishReason) {
    if (finishReason == null) {
      return "end_turn";
    }
    return switch (finishReason) {
      case "length" -> "max_tokens";
      case "tool_calls", "function_call" -> "tool_use";
      case "content_filter" -> "refusal";
      default -> "end_turn";
    };
  }

  /** {@code usage} with Anthropic's field names, from a chat completions {@code usage} (zeros when absent). */
  static ObjectNode usage(JsonNode usage) {
    ObjectNode out = Json.object();
    out.put("input_tokens", usage == null ? 0 : usage.path("prompt_tokens").asLong(0));
    out.put("output_tokens", usage == null ? 0 : usage.path("completion_tokens").asLong(0));
    return out;
  }

  /** A tool call's arguments (JSON text) as the {@code input} object; text that is no object is kept under {@code arguments}. */
  static JsonNode input(String arguments) {
    if (arguments == null || arguments.isBlank()) {
      return Json.object();
    }
    try {
      JsonNode parsed = Json.parse(arguments);
      if (parsed != null && parsed.isObject()) {
        return parsed;
      }
    } catch (IOException e) {
      // kept as text below
    }
    return Json.object().put("arguments", arguments);
  }

  /** An empty {@code message} as {@code message_start} carries it. */
  static ObjectNode start(String id, String model) {
    ObjectNode message = Json.object();
    message.put("id", id);
    message.put("type", "message");
    message.put("role", "assistant");
    message.put("model", model);
    message.putArray("content");
    message.putNull("stop_reason");
    message.putNull("stop_sequence");
    message.set("usage", usage(null));
    return message;
  }
}
