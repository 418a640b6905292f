package io.spillway.core.upstream;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.sse.SseParser;
import io.spillway.core.sse.SseReader;
import io.spillway.core.sse.UpstreamEvents;
import io.spillway.core.time.DurationText;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * An upstream's {@code text/event-stream} answer read from its {@link BodySource} as the bytes
 * arrive, without blocking: the front end relays it from its event loop. The same rules as for a
 * stream read from a socket ({@link io.spillway.core.sse.InputStreamEventStream}): a stream that
 * ends without its terminal event, a line that is no event field, or an event that is not a JSON
 * object is a failure, never a quiet end.
 *
 * <p>Each whole event must arrive within {@code eventTimeout}, counted from when the gateway asks
 * for it (a poll that finds nothing): keep-alive comments, or an event sent a byte at a time, do
 * not hold a request longer. Past it the exchange is cancelled and the stream fails with a timeout.
 * Time spent waiting for a slow client does not count, since nothing is asked for meanwhile.
 */
public final class UpstreamEventStream implements EventStream {
  private static final int MAX_LINE = 4 * 1024 * 1024;

  private final String backend;
  private final UpstreamExchange exchange;
  private final BodySource body;
  private final WaitTimer wait;
  private final SseParser parser = new SseParser(MAX_LINE, () -> {}, true, true);
  private final ArrayDeque<SseEvent> parsed = new ArrayDeque<>(2);
  /** Where the parser puts events: made once, not per read. */
  private final Consumer<SseEvent> toParsed = parsed::add;
  private final Runnable onClose;
  private volatile boolean closed;
  private boolean started;
  private boolean terminated;
  private boolean closeRan;
  /** A failure found while parsing, thrown once the events parsed before it are handed out. */
  private UpstreamException failure;

  /**
   * @param eventTimeout the longest wait for each whole event; null or zero: no limit
   * @param onClose runs once when the stream is closed (the backend's count of open calls)
   */
  public UpstreamEventStream(String backend, UpstreamExchange exchange, Duration eventTimeout, Runnable onClose) {
    this.backend = backend;
    this.exchange = exchange;
    this.body = exchange.body();
    this.wait = new WaitTimer(exchange, eventTimeout);
    this.onClose = onClose;
  }

  @Override
  public SseEvent poll() {
    if (terminated) {
      return null;
    }
    while (true) {
      if (wait.expired()) {
        throw timedOutFailure();
      }
      SseEvent event = parsed.poll();
      if (event != null) {
        wait.disarm();
        return checked(event);
      }
      if (failure != null) {
        wait.disarm();
        throw failure;
      }
      byte[] chunk;
      try {
        chunk = body.poll();
      } catch (UpstreamException e) {
        if (wait.expired()) {
          throw timedOutFailure();
        }
        if (closed) {
          return null;
        }
        throw e;
      }
      if (chunk == BodySource.PENDING) {
        wait.arm();
        return SseEvent.PENDING;
      }
      try {
        if (chunk == null) {
          SseEvent last = parser.finish();
          if (last != null) {
            parsed.add(last);
            continue;
          }
          wait.disarm();
          if (closed) {
            return null;
          }
          throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
              "The " + backend + " backend ended the stream before it was complete", null);
        }
        parser.feed(chunk, 0, chunk.length, toParsed);
      } catch (SseReader.NotAnEventStreamException e) {
        failure = invalid("is not server-sent events");
      } catch (IOException e) {
        close();
        failure = UpstreamFailures.midStream(backend, e);
      }
    }
  }

  private SseEvent checked(SseEvent event) {
    if (!event.isDone() && !event.dataLooksLikeJsonObject()) {
      throw invalid("holds an event that is not a JSON object");
    }
    started = true;
    if (UpstreamEvents.isTerminal(event)) {
      terminated = true;
      release();
    }
    return event;
  }

  @Override
  public void onReady(Runnable action) {
    if (!parsed.isEmpty() || wait.expired()) {
      action.run();
      return;
    }
    body.onReady(action);
  }

  @Override
  public boolean nonBlocking() {
    return true;
  }

  @Override
  public boolean started() {
    return started;
  }

  @Override
  public void close() {
    closed = true;
    wait.disarm();
    body.close();
    release();
  }

  private synchronized void release() {
    if (!closeRan) {
      closeRan = true;
      onClose.run();
    }
  }

  private UpstreamException timedOutFailure() {
    return new UpstreamException(backend, UpstreamException.Failure.TIMEOUT,
        "The " + backend + " backend sent no whole event within "
            + DurationText.format(wait.limit()), null);
  }

  private UpstreamException invalid(String what) {
    close();
    return new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
        "The " + backend + " backend's stream " + what, null);
  }
}
