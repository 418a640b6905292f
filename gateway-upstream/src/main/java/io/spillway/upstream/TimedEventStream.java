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
 * for meanwhile). A poll that answers {@link SseEvent#PENDING} keeps the event's time running until
 * a later poll brings it.
 */
public final class TimedEventStream extends ForwardingEventStream {
  private final String backend;
  private final Duration limit;
  private final PhaseTimeout timeout;
  /** Whether an event was asked for and has not come yet (polls that answered PENDING keep its time). */
  private boolean waiting;

  public TimedEventStream(String backend, EventStream upstream, Duration limit) {
    super(upstream);
    this.backend = backend;
    this.limit = limit;
    this.timeout = new PhaseTimeout(limit, upstream::close);
  }

  @Override
  public SseEvent poll() {
    SseEvent event;
    if (!waiting) {
      timeout.begin();
      waiting = true;
    }
    try {
      event = delegate.poll();
    } catch (GatewayException e) {
      // The socket's own read timeout may fire first; either way the event did not arrive in time.
      waiting = false;
      boolean readTimedOut = e instanceof UpstreamException u && u.failure() == UpstreamException.Failure.TIMEOUT;
      if (timeout.end() || readTimedOut) {
        throw timedOut();
      }
      throw e;
    } catch (RuntimeException e) {
      waiting = false;
      timeout.end();
      throw e;
    }
    if (event == SseEvent.PENDING) {
      return event; // still waiting for this event: its time keeps running
    }
    waiting = false;
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
