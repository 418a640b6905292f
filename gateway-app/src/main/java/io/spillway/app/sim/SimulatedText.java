package io.spillway.app.sim;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * What the simulators answer: a short, deterministic text that says who answered, split into the
 * pieces a stream sends, and rough token counts (four characters a token).
 */
final class SimulatedText {
  private SimulatedText() {}

  static String answer(String who, String model, String prompt) {
    String topic = prompt == null ? "" : prompt.strip().replaceAll("\\s+", " ");
    if (topic.length() > 60) {
      topic = topic.substring(0, 60) + "…";
    }
    return "This is " + who + " answering with " + model + (topic.isEmpty() ? "." : ". You said: \"" + topic + "\".")
        + " Spillway relayed it in OpenAI's format.";
  }

  /**
   * The answer once a tool has run: what it printed, shortened to its end (where a command's output
   * follows the lines an agent puts before it: exit code, wall time), and that the task is done.
   */
  static String afterTool(String who, String model, String output) {
    String printed = output == null ? "" : output.strip().replaceAll("\\s+", " ");
    if (printed.length() > 80) {
      printed = "…" + printed.substring(printed.length() - 80);
    }
    return "This is " + who + " answering with " + model + ". The tool printed: \"" + printed + "\". Done.";
  }

  /** The answer cut into word-sized pieces (each but the first starting with its space). */
  static List<String> pieces(String text) {
    List<String> out = new ArrayList<>();
    int start = 0;
    for (int i = 1; i <= text.length(); i++) {
      if (i == text.length() || text.charAt(i) == ' ') {
        out.add(text.substring(start, i));
        start = i;
      }
    }
    return out;
  }

  static int tokens(String text) {
    return text == null || text.isEmpty() ? 0 : Math.max(1, (text.length() + 3) / 4);
  }

  /** The last user text of a chat {@code messages} array (string or text parts). */
  static String lastUserText(JsonNode messages) {
    String last = "";
    if (messages != null && messages.isArray()) {
      for (JsonNode message : messages) {
        if ("user".equals(Json.text(message, "role"))) {
          last = text(message.get("content"));
        }
      }
    }
    return last;
  }

  /** Text of a content value: a string, or the text of its parts. */
  static String text(JsonNode content) {
    if (content == null || content.isNull()) {
      return "";
    }
    if (content.isTextual()) {
      return content.textValue();
    }
    StringBuilder out = new StringBuilder();
    for (JsonNode part : content) {
      String text = Json.text(part, "text");
      if (text != null) {
        out.append(out.isEmpty() ? "" : " ").append(text);
      }
    }
    return out.toString();
  }

  /** The text a Responses API {@code input} ends with. */
  static String responsesInput(JsonNode input) {
    if (input == null || input.isNull()) {
      return "";
    }
    if (input.isTextual()) {
      return input.textValue();
    }
    String last = "";
    for (JsonNode item : input) {
      if ("user".equals(Json.text(item, "role"))) {
        last = text(item.get("content"));
      }
    }
    return last;
  }
}
