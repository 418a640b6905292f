package io.spillway.core.sse;

import io.spillway.core.error.GatewayException;
import java.util.List;

/** An {@link EventStream} that delegates to another; override {@link #next} to transform events. */
public abstract class ForwardingEventStream implements EventStream {
  protected final EventStream delegate;

  protected ForwardingEventStream(EventStream delegate) {
    this.delegate = delegate;
  }

  @Override
  public SseEvent next() {
    return delegate.next();
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
