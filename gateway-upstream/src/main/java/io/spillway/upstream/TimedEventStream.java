package io.spillway.upstream;

import io.spillway.config.Durations;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.time.Duration;

/**
 * An upstream stream in which each whole event must arrive within the backend's timeout, counted
 * from when the gateway asks for it: keep-alive comments, or an event sent one byte at a time, do not
 * hold a request longer than that. Past the limit the upstream call is cancelled and the stream fails
 * with a timeout. Time spent waiting for a slow client is not counted (the next event is not asked
 * for meanwhile).
 */
public final class TimedEventStream extends ForwardingEventStream {
  private final String backend;
  private final Duration limit;
  private final PhaseTimeout timeout;

  public TimedEventStream(String backend, EventStream upstream, Duration limit) {
    super(upstream);
    this.backend = backend;
    this.limit = limit;
    this.timeout = new PhaseTimeout(limit, upstream::close);
  }

  @Override
  public SseEvent next() {
    SseEvent event;
    timeout.begin();
    try {
      event = delegate.next();
    } catch (GatewayException e) {
      // The socket's own read timeout may fire first; either way the event did not arrive in time.
      boolean readTimedOut = e instanceof UpstreamException u && u.failure() == UpstreamException.Failure.TIMEOUT;
      if (timeout.end() || readTimedOut) {
        throw timedOut();
      }
      throw e;
    } catch (RuntimeException e) {
      timeout.end();
      throw e;
    }
    if (timeout.end()) {
      throw timedOut();
    }
    return event;
  }

  private UpstreamException timedOut() {
    return new UpstreamException(backend, UpstreamException.Failure.TIMEOUT,
        "The " + backend + " backend sent no whole event within " + Durations.format(limit), null);
  }
}
