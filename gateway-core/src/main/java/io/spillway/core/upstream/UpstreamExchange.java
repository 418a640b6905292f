package io.spillway.core.upstream;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * One request in flight upstream. The head completes once the answer's head is in, or
 * exceptionally with an {@link io.spillway.core.error.UpstreamException} (connect failure, reset,
 * timeout); the body then arrives in {@link #body()}, read as fast as it is consumed.
 *
 * <p>{@link #cancel} may be called at any time from any thread: the upstream sees its stream
 * reset or its connection closed, and the exchange fails with a cancellation if it was still
 * running. Cancelling a finished exchange does nothing.
 */
public interface UpstreamExchange {
  CompletableFuture<UpstreamHead> head();

  /** The answer's body; valid once the head has arrived. */
  BodySource body();

  void cancel();

  /**
   * Runs {@code action} after {@code delay} on the exchange's own thread, unless the returned
   * handle is cancelled first: timers for phases the exchange itself does not bound (the wait for
   * each whole event of a stream).
   */
  Runnable schedule(Duration delay, Runnable action);
}
