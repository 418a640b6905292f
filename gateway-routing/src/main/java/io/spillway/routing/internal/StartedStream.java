package io.spillway.routing.internal;

import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.sse.EndingEventStream;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.ArrayDeque;
import java.util.List;

/**
 * A backend's stream whose first event the router has already read (to decide that the stream
 * really started), handed on as if it had not been read. Holds the backend's admission permit until
 * the stream ends or is closed.
 *
 * <p>Read from one thread; {@link #close} may come from any thread.
 */
public final class StartedStream extends EndingEventStream {
  private final AdmissionGate.Permit permit;
  private final ArrayDeque<SseEvent> readAhead;
  private volatile boolean started;

  public StartedStream(SseEvent first, EventStream delegate, AdmissionGate.Permit permit) {
    this(List.of(first), delegate, permit);
  }

  /** A stream whose first events ({@code readAhead}, none null) the router has read. */
  public StartedStream(List<SseEvent> readAhead, EventStream delegate, AdmissionGate.Permit permit) {
    super(delegate);
    this.readAhead = new ArrayDeque<>(readAhead);
    this.permit = permit;
  }

  @Override
  public SseEvent poll() {
    SseEvent event = readAhead.poll();
    if (event != null) {
      started = true;
      return event;
    }
    return super.poll();
  }

  /** The events read ahead are at hand at once; after them, the delegate says when there is more. */
  @Override
  public void onReady(Runnable action) {
    if (!readAhead.isEmpty()) {
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
