package io.spillway.core.sse;

/**
 * A pull-based stream of server-sent events, read from the request's virtual thread. Reading blocks
 * until the upstream sends the next event, so a slow client simply reads less often and the
 * upstream's TCP window applies the backpressure.
 *
 * <p>{@link #next} returns null once the stream has ended normally, and throws
 * {@link io.spillway.core.error.GatewayException} when it ended with a failure. {@link #close} may be
 * called at any time, from any thread, to cancel the upstream call; it is idempotent.
 */
public interface EventStream extends AutoCloseable {
  SseEvent next();

  @Override
  void close();

  /** Whether any event has been handed out yet (after that, failover is no longer possible). */
  boolean started();
}
