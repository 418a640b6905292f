package io.spillway.core.sse;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A stream that tells {@link #ended} exactly once how it ended: with {@code null} when its last
 * event was read or it was closed first, with the failure when a read failed. For whoever counts,
 * times or traces a stream without changing its events. {@link #ended} may run on the thread that
 * polls (an event loop, for a {@link #nonBlocking} stream), so it must not block.
 */
public abstract class EndingEventStream extends ForwardingEventStream {
  private final AtomicBoolean ended = new AtomicBoolean();

  protected EndingEventStream(EventStream delegate) {
    super(delegate);
  }

  /** Called once: {@code failure} is null for a stream that completed or was closed. */
  protected abstract void ended(RuntimeException failure);

  @Override
  public SseEvent poll() {
    SseEvent event;
    try {
      event = delegate.poll();
    } catch (RuntimeException e) {
      end(e);
      throw e;
    }
    if (event == null) {
      end(null);
    }
    return event;
  }

  @Override
  public void close() {
    try {
      delegate.close();
    } finally {
      end(null);
    }
  }

  private void end(RuntimeException failure) {
    if (ended.compareAndSet(false, true)) {
      ended(failure);
    }
  }
}
