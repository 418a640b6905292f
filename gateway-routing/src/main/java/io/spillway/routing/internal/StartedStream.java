package io.spillway.routing.internal;

import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.sse.EndingEventStream;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;

/**
 * A backend's stream whose first event the router has already read (to decide that the stream
 * really started), handed on as if it had not been read. Holds the backend's admission permit until
 * the stream ends or is closed.
 *
 * <p>Read from one thread; {@link #close} may come from any thread.
 */
public final class StartedStream extends EndingEventStream {
  private final AdmissionGate.Permit permit;
  private SseEvent first;
  private volatile boolean started;

  public StartedStream(SseEvent first, EventStream delegate, AdmissionGate.Permit permit) {
    super(delegate);
    this.first = first;
    this.permit = permit;
  }

  @Override
  public SseEvent poll() {
    SseEvent event = first;
    if (event != null) {
      first = null;
      started = true;
      return event;
    }
    return super.poll();
  }

  /** The first event is at hand at once; after it, the delegate says when there is more. */
  @Override
  public void onReady(Runnable action) {
    if (first != null) {
      action.run();
    } else {
      super.onReady(action);
    }
  }

  @Override
  protected void ended(RuntimeException failure) {
    permit.close();
  }

  @Override
  public boolean started() {
    return started;
  }
}
