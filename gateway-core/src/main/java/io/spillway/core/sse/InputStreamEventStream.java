package io.spillway.core.sse;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Reads an upstream's {@code text/event-stream} body. A stream that ends without its terminal event
 * ({@code [DONE]}, or a final {@code response.*} event for the Responses API) is a failure, never a
 * quiet end: the client gets an error event instead of a truncated answer.
 *
 * <p>With a {@code maxSilence}, a stream that sends no event for that long fails with a timeout
 * even while keep-alive comments keep its connection busy (a socket read timeout alone would be
 * reset by every comment, so such an upstream could hold a request forever).
 */
public final class InputStreamEventStream implements EventStream {
  private static final int MAX_LINE = 4 * 1024 * 1024;

  private final String backend;
  private final SseReader reader;
  private final AutoCloseable resource;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final Duration maxSilence;
  private final LongSupplier ticker;
  private long lastEventNanos;
  private boolean started;
  private boolean terminated;

  public InputStreamEventStream(String backend, InputStream body, AutoCloseable resource) {
    this(backend, body, resource, null, System::nanoTime);
  }

  /**
   * @param maxSilence the longest time between two events (null: no limit beyond the socket's)
   * @param ticker nanosecond time source for {@code maxSilence}
   */
  public InputStreamEventStream(
      String backend, InputStream body, AutoCloseable resource, Duration maxSilence, LongSupplier ticker) {
    this.backend = backend;
    this.resource = resource;
    this.maxSilence = maxSilence;
    this.ticker = ticker;
    this.lastEventNanos = ticker.getAsLong();
    this.reader = new SseReader(body, MAX_LINE, this::checkSilence);
  }

  private void checkSilence() {
    if (maxSilence != null && ticker.getAsLong() - lastEventNanos > maxSilence.toNanos()) {
      throw new UpstreamException(backend, UpstreamException.Failure.TIMEOUT,
          "The " + backend + " backend sent no event for " + maxSilence.toSeconds()
              + " s, only keep-alive comments", null);
    }
  }

  @Override
  public SseEvent next() {
    if (terminated) {
      return null;
    }
    SseEvent event;
    try {
      event = reader.next();
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
    started = true;
    lastEventNanos = ticker.getAsLong();
    if (isTerminal(event)) {
      terminated = true;
    }
    return event;
  }

  static boolean isTerminal(SseEvent event) {
    if (event.isDone()) {
      return true;
    }
    String name = event.event();
    return name != null
        && (name.equals("response.completed") || name.equals("response.failed")
            || name.equals("response.incomplete") || name.equals("error"));
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
