package io.spillway.core.sse;

import io.spillway.core.error.GatewayException;
import java.util.List;

/**
 * An {@link EventStream} that delegates to another; override {@link #poll} to transform events
 * (passing {@link SseEvent#PENDING} on unchanged). Readiness and whether it blocks are the
 * delegate's.
 */
public abstract class ForwardingEventStream implements EventStream {
  protected final EventStream delegate;

  protected ForwardingEventStream(EventStream delegate) {
    this.delegate = delegate;
  }

  @Override
  public SseEvent poll() {
    return delegate.poll();
  }

  @Override
  public void onReady(Runnable action) {
    delegate.onReady(action);
  }

  @Override
  public boolean nonBlocking() {
    return delegate.nonBlocking();
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public boolean started() {
    return delegate.started();
  }

  @Override
  public List<SseEvent> errorEvents(GatewayException e) {
    return delegate.errorEvents(e);
  }
}
