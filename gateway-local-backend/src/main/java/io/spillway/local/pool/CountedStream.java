package io.spillway.local.pool;

import io.spillway.core.sse.EndingEventStream;
import io.spillway.core.sse.EventStream;


/**
 * A stream from one pooled server: the server counts it as outstanding until it ends, and its
 * breaker learns how it ended: a failure when the stream broke off (the server died or stalled), a
 * success when it completed or the client went away first.
 */
final class CountedStream extends EndingEventStream {
  private final PooledServer server;
  private final long startNanos;

  CountedStream(EventStream delegate, PooledServer server, long startNanos) {
    super(delegate);
    this.server = server;
    this.startNanos = startNanos;
  }

  @Override
  protected void ended(RuntimeException failure) {
    server.end();
    if (failure == null) {
      server.succeeded(startNanos);
    } else {
      server.failed(startNanos, failure);
    }
  }
}
