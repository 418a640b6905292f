package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.sse.EventUsage;
import io.spillway.core.sse.SseEvent;

/** Reads token usage from an OpenAI answer: chat/completions' and the Responses API's field names. */
final class Usage {
  private Usage() {}

  /** {prompt, completion}, each -1 when absent; {@code usage} may be null. */
  static long[] of(JsonNode usage) {
    if (usage == null || !usage.isObject()) {
      return new long[] {-1, -1};
    }
    return new long[] {
      EventUsage.number(usage, "prompt_tokens", "input_tokens"),
      EventUsage.number(usage, "completion_tokens", "output_tokens")
    };
  }

  /** The usage an event carries as {prompt, completion}, or null when it carries none. */
  static long[] ofEvent(SseEvent event) {
    RequestOutcome.Usage usage = EventUsage.of(event);
    return usage == null ? null : new long[] {usage.promptTokens(), usage.completionTokens()};
  }
}
