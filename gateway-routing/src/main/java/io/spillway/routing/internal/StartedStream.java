package io.spillway.routing.internal;

import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;

/**
 * A backend's stream whose first event the router has already read (to decide that the stream
 * really started), handed on as if it had not been read. Holds the backend's admission permit until
 * the stream ends or is closed.
 *
 * <p>Read from one thread; {@link #close} may come from any thread.
 */
public final class StartedStream implements EventStream {
  private final EventStream delegate;
  private final AdmissionGate.Permit permit;
  private SseEvent first;
  private volatile boolean started;

  public StartedStream(SseEvent first, EventStream delegate, AdmissionGate.Permit permit) {
    this.first = first;
    this.delegate = delegate;
    this.permit = permit;
  }

  @Override
  public SseEvent next() {
    SseEvent event = first;
    if (event != null) {
      first = null;
      started = true;
      return event;
    }
    try {
      event = delegate.next();
    } catch (RuntimeException e) {
      permit.close();
      throw e;
    }
    if (event == null) {
      permit.close();
    }
    return event;
  }

  @Override
  public void close() {
    try {
      delegate.close();
    } finally {
      permit.close();
    }
  }

  @Override
  public boolean started() {
    return started;
  }
}
