package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;

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

  private static long number(JsonNode usage, String name, String alternative) {
    JsonNode value = usage.get(name);
    if (value == null || !value.isNumber()) {
      value = usage.get(alternative);
    }
    return value != null && value.isNumber() ? value.asLong() : -1;
  }
}
