package io.spillway.core.sse;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.EventFields;
import io.spillway.core.pipeline.RequestOutcome;

/**
 * The token usage a stream event reports: {@code usage} of a chat/completions chunk,
 * {@code response.usage} of a Responses API event, or for Anthropic's Messages API
 * {@code message.usage} of {@code message_start} (the input) and {@code usage} of
 * {@code message_delta} (the output so far), in each API's field names. Anthropic's input is the
 * sum of its uncached, cache-written and cache-read parts. Read without a tree of the event
 * ({@link EventFields}): a {@code response.completed} event carries the whole answer.
 */
public final class EventUsage {
  private EventUsage() {}

  /** The usage {@code event} carries (a count it lacks is -1), or null when it carries none. */
  public static RequestOutcome.Usage of(SseEvent event) {
    if (event.isDone() || !event.mayCarryUsage()) {
      return null;
    }
    try {
      EventFields chunk = EventFields.read(event.data());
      JsonNode usage = chunk.usage();
      if (usage == null || usage.isNull()) {
        usage = chunk.responseUsage();
      }
      if (usage == null || usage.isNull()) {
        usage = chunk.messageUsage();
      }
      if (usage == null || !usage.isObject()) {
        return null;
      }
      long prompt = number(usage, "prompt_tokens", "input_tokens");
      if (prompt >= 0) {
        prompt += Math.max(0, number(usage, "cache_creation_input_tokens", "cache_creation_input_tokens"))
            + Math.max(0, number(usage, "cache_read_input_tokens", "cache_read_input_tokens"));
      }
      long completion = number(usage, "completion_tokens", "output_tokens");
      return prompt >= 0 || completion >= 0 ? new RequestOutcome.Usage(prompt, completion) : null;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** The count under {@code name} (or {@code alternative}), or -1. */
  public static long number(JsonNode usage, String name, String alternative) {
    JsonNode value = usage.get(name);
    if (value == null || !value.isNumber()) {
      value = usage.get(alternative);
    }
    return value != null && value.isNumber() ? value.asLong() : -1;
  }
}
