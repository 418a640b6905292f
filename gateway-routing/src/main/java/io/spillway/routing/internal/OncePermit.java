package io.spillway.routing.internal;

import io.spillway.core.pipeline.AdmissionGate;
import java.util.concurrent.atomic.AtomicBoolean;

/** An admission permit that is given back exactly once, however many paths try to close it. */
public final class OncePermit implements AdmissionGate.Permit {
  private final AdmissionGate.Permit delegate;
  private final AtomicBoolean closed = new AtomicBoolean();

  public OncePermit(AdmissionGate.Permit delegate) {
    this.delegate = delegate;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      delegate.close();
    }
  }
}
