package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;

/**
 * Drops the usage-only chunk ({@code "choices": []} plus a {@code usage} object) from a
 * chat/completions or completions stream whose client did not ask for it: Spillway asks the
 * upstream for usage on the client's behalf, and the client gets the stream it asked for.
 */
final class UsageChunkFilter extends ForwardingEventStream {
  UsageChunkFilter(EventStream delegate) {
    super(delegate);
  }

  @Override
  public SseEvent poll() {
    SseEvent event;
    do {
      event = delegate.poll();
    } while (event != null && event != SseEvent.PENDING && isUsageChunk(event));
    return event;
  }

  static boolean isUsageChunk(SseEvent event) {
    if (!event.dataStartsWith('{') || !event.mayCarryUsage()) {
      return false; // read on the bytes: only a chunk that may be it is decoded
    }
    try {
      JsonNode json = Json.parse(event.data());
      JsonNode choices = json.get("choices");
      JsonNode usage = json.get("usage");
      return choices != null && choices.isArray() && choices.isEmpty() && usage != null && usage.isObject();
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
