package io.spillway.local.pool;

import io.spillway.core.error.GatewayException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A stream from one pooled server: the server counts it as outstanding until it ends, and its
 * breaker learns how it ended: a failure when the stream broke off (the server died or stalled), a
 * success when it completed or the client went away first.
 */
final class CountedStream extends ForwardingEventStream {
  private final PooledServer server;
  private final long startNanos;
  private final AtomicBoolean ended = new AtomicBoolean();

  CountedStream(EventStream delegate, PooledServer server, long startNanos) {
    super(delegate);
    this.server = server;
    this.startNanos = startNanos;
  }

  @Override
  public SseEvent next() {
    SseEvent event;
    try {
      event = delegate.next();
    } catch (GatewayException e) {
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
      server.end();
      if (failure == null) {
        server.succeeded(startNanos);
      } else {
        server.failed(startNanos, failure);
      }
    }
  }
}
