package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;

/** Pulls the generated text out of OpenAI answers, for payload logging only. */
final class Completions {
  private Completions() {}

  /** chat ({@code choices[].message.content}), completions ({@code choices[].text}), responses ({@code output[].content[].text}). */
  static void appendBuffered(JsonNode answer, StringBuilder out, int max) {
    for (JsonNode choice : answer.path("choices")) {
      append(out, Json.text(choice.path("message"), "content"), max);
      append(out, Json.text(choice, "text"), max);
    }
    for (JsonNode item : answer.path("output")) {
      for (JsonNode content : item.path("content")) {
        append(out, Json.text(content, "text"), max);
      }
    }
  }

  /** chat ({@code choices[].delta.content}), completions ({@code choices[].text}), responses ({@code response.output_text.delta}). */
  static void appendStreamed(SseEvent event, StringBuilder out, int max) {
    if (out.length() >= max) {
      return;
    }
    try {
      JsonNode chunk = Json.parse(event.data());
      for (JsonNode choice : chunk.path("choices")) {
        append(out, Json.text(choice.path("delta"), "content"), max);
        append(out, Json.text(choice, "text"), max);
      }
      if ("response.output_text.delta".equals(Json.text(chunk, "type"))) {
        append(out, Json.text(chunk, "delta"), max);
      }
    } catch (IOException | RuntimeException e) {
      // Not JSON: nothing to add.
    }
  }

  private static void append(StringBuilder out, String text, int max) {
    if (text != null && out.length() < max) {
      out.append(text, 0, Math.min(text.length(), max - out.length()));
    }
  }
}
