package io.spillway.local.openai;

import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.ArrayDeque;
import java.util.List;

/** Events already at hand, handed out one by one. Not thread-safe, except {@link #close}. */
final class ListedEvents implements EventStream {
  private final ArrayDeque<SseEvent> events;
  private volatile boolean closed;
  private boolean started;

  ListedEvents(List<SseEvent> events) {
    this.events = new ArrayDeque<>(events);
  }

  @Override
  public SseEvent next() {
    if (closed) {
      return null;
    }
    SseEvent event = events.poll();
    started |= event != null;
    return event;
  }

  @Override
  public void close() {
    closed = true;
  }

  @Override
  public boolean started() {
    return started;
  }
}
