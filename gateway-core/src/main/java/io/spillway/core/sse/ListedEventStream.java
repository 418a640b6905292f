package io.spillway.core.sse;

import java.util.List;

/**
 * Events already at hand (a cached answer replayed, a whole answer turned into its stream), handed
 * out in order. There is nothing upstream to cancel, so closing only stops the hand-out. One reader
 * at a time; {@link #close} may come from any thread. Never blocks and never answers
 * {@link SseEvent#PENDING}.
 */
public final class ListedEventStream implements EventStream {
  private final List<SseEvent> events;
  private volatile boolean closed;
  private int next;

  /** Hands out {@code events}, which must not change while it does. */
  public ListedEventStream(List<SseEvent> events) {
    this.events = events;
  }

  @Override
  public SseEvent poll() {
    if (closed || next >= events.size()) {
      return null;
    }
    return events.get(next++);
  }

  /** Never {@link SseEvent#PENDING}: every event is at hand. */
  @Override
  public boolean nonBlocking() {
    return true;
  }

  @Override
  public void close() {
    closed = true;
  }

  @Override
  public boolean started() {
    return next > 0;
  }
}
