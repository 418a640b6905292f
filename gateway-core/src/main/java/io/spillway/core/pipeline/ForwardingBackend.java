package io.spillway.core.pipeline;

import java.util.Objects;

/**
 * A {@link Backend} that wraps another (to meter or trace its calls): name, readiness and warm-up
 * are the wrapped backend's; subclasses say what {@link #call} adds.
 */
public abstract class ForwardingBackend implements Backend {
  protected final Backend delegate;

  protected ForwardingBackend(Backend delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  @Override
  public String name() {
    return delegate.name();
  }

  @Override
  public boolean ready() {
    return delegate.ready();
  }

  @Override
  public void warmUp() {
    delegate.warmUp();
  }
}
