package io.spillway.core.sse;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.EventFields;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.tokens.ReportedCount;

/**
 * The token usage a stream event reports: {@code usage} of a chat/completions chunk,
 * {@code response.usage} of a Responses API event, or for Anthropic's Messages API
 * {@code message.usage} of {@code message_start} (the input) and {@code usage} of
 * {@code message_delta} (the output so far), in each API's field names. Anthropic's input is the
 * sum of its uncached, cache-written and cache-read parts. Read without a tree of the event
 * ({@link EventFields}): a {@code response.completed} event carries the whole answer.
 *
 * <p>A report is believed only when each count it holds passes {@link ReportedCount} (a
 * non-negative integer of at most {@code quota.maxReportedTokens}), as quota accounting requires of
 * the usage it charges: one hostile count makes the whole report read as none, so the access log,
 * metrics and traces never show a number Spillway would refuse to charge.
 */
public final class EventUsage {
  private static final String[] COUNTS = {"prompt_tokens", "input_tokens", "completion_tokens", "output_tokens",
      "cache_creation_input_tokens", "cache_read_input_tokens", "total_tokens"};

  private EventUsage() {}

  /** The usage {@code event} carries (a count it lacks is -1), or null when it carries none or a refused one. */
  public static RequestOutcome.Usage of(SseEvent event, long maxReportedTokens) {
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
      return ofUsage(usage, maxReportedTokens);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * The counts of a {@code usage} object (a buffered answer's, or an event's), a count it lacks -1;
   * null when it is no object, holds no count, or holds one {@link ReportedCount} refuses.
   */
  public static RequestOutcome.Usage ofUsage(JsonNode usage, long maxReportedTokens) {
    if (usage == null || !usage.isObject()) {
      return null;
    }
    for (String name : COUNTS) {
      JsonNode count = usage.get(name);
      if (ReportedCount.present(count) && ReportedCount.refusal(count, maxReportedTokens) != null) {
        return null;
      }
    }
    long prompt = number(usage, "prompt_tokens", "input_tokens");
    if (prompt >= 0) {
      // Saturating: each part is within the bound, but the bound may be as large as a long.
      prompt = saturatedSum(prompt, Math.max(0, number(usage, "cache_creation_input_tokens", "")),
          Math.max(0, number(usage, "cache_read_input_tokens", "")));
    }
    long completion = number(usage, "completion_tokens", "output_tokens");
    return prompt >= 0 || completion >= 0 ? new RequestOutcome.Usage(prompt, completion) : null;
  }

  private static long saturatedSum(long... counts) {
    long sum = 0;
    for (long count : counts) {
      sum = sum > Long.MAX_VALUE - count ? Long.MAX_VALUE : sum + count;
    }
    return sum;
  }

  /** The count under {@code name} (or {@code alternative}), or -1; call on a report {@link #ofUsage} accepted. */
  private static long number(JsonNode usage, String name, String alternative) {
    JsonNode value = usage.get(name);
    if (value == null || !value.isNumber()) {
      value = usage.get(alternative);
    }
    return value != null && value.isNumber() ? value.asLong() : -1;
  }
}
