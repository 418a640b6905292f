package io.spillway.quota.accounting;

import io.spillway.core.error.GatewayException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Hands out a fixed list of events, then ends (or fails with {@code failure}). Counts closes. A
 * {@link #nonBlocking(List, GatewayException) non-blocking} one says so (it never has to wait).
 */
final class ScriptedEventStream implements EventStream {
  private final List<SseEvent> events;
  private final GatewayException failure;
  private final AtomicInteger closes = new AtomicInteger();
  private final boolean nonBlocking;
  private int next;

  ScriptedEventStream(List<SseEvent> events, GatewayException failure) {
    this(events, failure, false);
  }

  private ScriptedEventStream(List<SseEvent> events, GatewayException failure, boolean nonBlocking) {
    this.events = events;
    this.failure = failure;
    this.nonBlocking = nonBlocking;
  }

  static ScriptedEventStream nonBlocking(List<SseEvent> events, GatewayException failure) {
    return new ScriptedEventStream(events, failure, true);
  }

  @Override
  public boolean nonBlocking() {
    return nonBlocking;
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
