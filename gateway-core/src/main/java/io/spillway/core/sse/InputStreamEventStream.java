package io.spillway.core.sse;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reads an upstream's {@code text/event-stream} body. A stream that ends without its terminal event
 * ({@code [DONE]}, or a final {@code response.*} event for the Responses API) is a failure, never a
 * quiet end: the client gets an error event instead of a truncated answer. So is a body that is not
 * an event stream (a line that is no event field) and an event whose data is not a JSON object
 * (every event but {@code [DONE]} carries one): the gateway relays events, never text it cannot
 * vouch for. The JSON check is structural and cheap (an object's braces, first and last), not a parse.
 *
 * <p>It reads by blocking and has no time limit of its own, so the data path does not use it: an
 * upstream's stream there is an {@link io.spillway.core.upstream.UpstreamEventStream}, polled on the
 * event loop, which bounds the time to each whole event. This one reads bodies that are already at
 * hand (tests, the relay benchmark).
 */
public final class InputStreamEventStream implements EventStream {
  private static final int MAX_LINE = 4 * 1024 * 1024;

  private final String backend;
  private final SseReader reader;
  private final AutoCloseable resource;
  private final AtomicBoolean closed = new AtomicBoolean();
  private boolean started;
  private boolean terminated;

  public InputStreamEventStream(String backend, InputStream body, AutoCloseable resource) {
    this.backend = backend;
    this.resource = resource;
    this.reader = new SseReader(body, MAX_LINE, () -> {}, true);
  }

  /** Blocks until the next event has been read: this stream is never {@link #nonBlocking}. */
  @Override
  public SseEvent poll() {
    if (terminated) {
      return null;
    }
    SseEvent event;
    try {
      event = reader.next();
    } catch (SseReader.NotAnEventStreamException e) {
      throw invalid("is not server-sent events");
    } catch (IOException e) {
      if (closed.get()) {
        return null;
      }
      throw UpstreamFailures.midStream(backend, e);
    }
    if (event == null) {
      if (closed.get()) {
        return null;
      }
      throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
          "The " + backend + " backend ended the stream before it was complete", null);
    }
    if (!event.isDone() && !event.dataLooksLikeJsonObject()) {
      throw invalid("holds an event that is not a JSON object");
    }
    started = true;
    if (UpstreamEvents.isTerminal(event)) {
      terminated = true;
    }
    return event;
  }

  private UpstreamException invalid(String what) {
    close();
    return new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
        "The " + backend + " backend's stream " + what, null);
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      try {
        resource.close();
      } catch (Exception ignored) {
        // Closing is best effort: the connection is discarded either way.
      }
    }
  }

  @Override
  public boolean started() {
    return started;
  }
}
