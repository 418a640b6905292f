package io.spillway.quota.accounting;

import io.spillway.core.error.GatewayException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** Hands out a fixed list of events, then ends (or fails with {@code failure}). Counts closes. */
final class ScriptedEventStream implements EventStream {
  private final List<SseEvent> events;
  private final GatewayException failure;
  private final AtomicInteger closes = new AtomicInteger();
  private int next;

  ScriptedEventStream(List<SseEvent> events, GatewayException failure) {
    this.events = events;
    this.failure = failure;
  }

  @Override
  public SseEvent poll() {
    if (next < events.size()) {
      return events.get(next++);
    }
    if (failure != null) {
      throw failure;
    }
    return null;
  }

  @Override
  public void close() {
    closes.incrementAndGet();
  }

  @Override
  public boolean started() {
    return next > 0;
  }

  int closes() {
    return closes.get();
  }
}
