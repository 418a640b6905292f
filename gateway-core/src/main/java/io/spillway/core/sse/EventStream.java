package io.spillway.core.sse;

import io.spillway.core.error.GatewayException;
import java.util.List;

/**
 * A pull-based stream of server-sent events, read from the request's virtual thread. Reading blocks
 * until the upstream sends the next event, so a slow client simply reads less often and the
 * upstream's TCP window applies the backpressure.
 *
 * <p>{@link #next} returns null once the stream has ended normally, and throws
 * {@link io.spillway.core.error.GatewayException} when it ended with a failure. {@link #close} may be
 * called at any time, from any thread, to cancel the upstream call; it is idempotent.
 *
 * <p>A stream knows the API it speaks, so it frames its own failure ({@link #errorEvents}): the
 * front end writes whatever the stream gives and knows no API.
 */
public interface EventStream extends AutoCloseable {
  SseEvent next();

  @Override
  void close();

  /** Whether any event has been handed out yet (after that, failover is no longer possible). */
  boolean started();

  /**
   * The events that end this stream when it fails after its first byte with {@code e}. By default
   * the chat completions and completions shape ({@link StreamErrors#chat}); a Responses API stream
   * answers {@link StreamErrors#responses}. A wrapper answers what the stream it wraps answers.
   */
  default List<SseEvent> errorEvents(GatewayException e) {
    return StreamErrors.chat(e);
  }
}
