package io.spillway.app.observe;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.sse.EventUsage;
import io.spillway.core.sse.SseEvent;

/**
 * Reads token usage from an OpenAI answer (chat/completions' and the Responses API's field names)
 * for what the gateway shows: only counts quota accounting would believe ({@link EventUsage}).
 */
final class Usage {
  private Usage() {}

  /** {prompt, completion}, each -1 when absent or refused; {@code usage} may be null. */
  static long[] of(JsonNode usage, long maxReportedTokens) {
    RequestOutcome.Usage counts = EventUsage.ofUsage(usage, maxReportedTokens);
    return counts == null ? new long[] {-1, -1} : new long[] {counts.promptTokens(), counts.completionTokens()};
  }

  /** The usage an event carries as {prompt, completion}, or null when it carries none or a refused one. */
  static long[] ofEvent(SseEvent event, long maxReportedTokens) {
    RequestOutcome.Usage usage = EventUsage.of(event, maxReportedTokens);
    return usage == null ? null : new long[] {usage.promptTokens(), usage.completionTokens()};
  }
}
