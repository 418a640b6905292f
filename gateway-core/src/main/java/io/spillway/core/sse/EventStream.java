package io.spillway.core.sse;

import io.spillway.core.error.GatewayException;
import java.util.List;

/**
 * A stream of server-sent events, read in one of two ways.
 *
 * <p><b>Polled</b> ({@link #poll}), without blocking: an event, {@code null} once the stream has
 * ended normally, or {@link SseEvent#PENDING} when nothing has arrived yet; then {@link #onReady}
 * says when to poll again. The front end relays a stream that {@link #nonBlocking() never blocks}
 * this way on its event loop, with no thread per stream: it polls while the client's socket takes
 * more, and a slow client simply polls less, so the upstream's reads stop and its TCP window applies
 * the backpressure.
 *
 * <p><b>Read</b> ({@link #next}) from a virtual thread: blocks until the next event or the end.
 *
 * <p>A source implements {@link #poll}; one that can only block (a stream read from an
 * {@code InputStream}) blocks in it and answers {@code false} to {@link #nonBlocking}. A wrapper that
 * changes events implements {@link #poll} too, passes {@link SseEvent#PENDING} on unchanged, keeps
 * whatever it has read ahead for the next poll, and blocks only where its source does: it answers
 * what its source answers to {@link #nonBlocking}. A wrapper with blocking work at the end (a
 * store write) either answers {@code false} or, better, does that work on another thread and
 * answers {@link SseEvent#PENDING} until it is done (quota's metering does). {@link #close} may
 * block: the front end never calls it on an event loop.
 *
 * <p>Both throw {@link io.spillway.core.error.GatewayException} when the stream ended with a
 * failure. {@link #close} may be called at any time, from any thread, to cancel the upstream call;
 * it is idempotent.
 *
 * <p>A stream knows the API it speaks, so it frames its own failure ({@link #errorEvents}): the
 * front end writes whatever the stream gives and knows no API.
 */
public interface EventStream extends AutoCloseable {
  /**
   * The next event without blocking (for a {@link #nonBlocking} stream): an event, {@code null} at
   * the end, or {@link SseEvent#PENDING} when none is there yet. One reader at a time.
   */
  SseEvent poll();

  /**
   * Runs {@code action} once, as soon as {@link #poll} has something other than
   * {@link SseEvent#PENDING} to give (at once when it already has). It may run on the thread that
   * received the data (an event loop): it must be quick and must not block. The default, for a
   * stream that never answers {@link SseEvent#PENDING}, runs it at once.
   */
  default void onReady(Runnable action) {
    action.run();
  }

  /** Whether {@link #poll} never blocks, so the stream may be relayed from an event loop. */
  default boolean nonBlocking() {
    return false;
  }

  /**
   * The next event, blocking the calling (virtual) thread until it arrives; null once the stream
   * has ended normally. Built on {@link #poll} and {@link #onReady}; no stream overrides it.
   */
  default SseEvent next() {
    while (true) {
      SseEvent event = poll();
      if (event != SseEvent.PENDING) {
        return event;
      }
      ReadyWait.await(this::onReady);
    }
  }

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
