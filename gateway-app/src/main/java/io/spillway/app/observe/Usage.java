package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;

/** Reads token usage from an OpenAI answer: chat/completions' and the Responses API's field names. */
final class Usage {
  private Usage() {}

  /** {prompt, completion}, each -1 when absent; {@code usage} may be null. */
  static long[] of(JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return new long[] {-1, -1};
    }
    return new long[] {
      number(usage, "prompt_tokens", "input_tokens"), number(usage, "completion_tokens", "output_tokens")
    };
  }

  /**
   * The usage an event carries ({@code usage} of a chat/completions chunk, {@code response.usage} of
   * a Responses API event), or null when it carries none.
   */
  static long[] ofEvent(SseEvent event) {
    String data = event.data();
    if (event.isDone() || !event.mayCarryUsage()) {
      return null;
    }
    try {
      JsonNode chunk = Json.parse(data);
      JsonNode usage = chunk.get("usage");
      if ((usage == null || usage.isNull()) && chunk.get("response") != null) {
        usage = chunk.get("response").get("usage");
      }
      long[] counts = of(usage);
      return counts[0] >= 0 || counts[1] >= 0 ? counts : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static long number(JsonNode usage, String name, String alternative) {
    JsonNode value = usage.get(name);
    if (value == null || !value.isNumber()) {
      value = usage.get(alternative);
    }
    return value != null && value.isNumber() ? value.asLong() : -1;
  }
}
