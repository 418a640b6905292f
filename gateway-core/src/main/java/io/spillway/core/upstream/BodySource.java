package io.spillway.core.upstream;

/**
 * An upstream answer's body as it arrives, polled without blocking. The transport reads from the
 * network only while the body's reader keeps up: the queue of chunks not yet polled is bounded, so
 * a slow reader slows the upstream down (its TCP window, or its HTTP/2 flow-control window).
 *
 * <p>{@link #poll} answers a chunk, {@code null} at the end, or {@link #PENDING} when nothing has
 * arrived; {@link #onReady} then says when to poll again. It throws an
 * {@link io.spillway.core.error.UpstreamException} when the body failed. One reader at a time;
 * {@link #close} (from any thread) gives the rest of the body up and cancels the exchange.
 */
public interface BodySource extends AutoCloseable {
  /** Not a chunk: nothing has arrived yet. Compared by identity. */
  byte[] PENDING = new byte[0];

  byte[] poll();

  /** Runs {@code action} once as soon as {@link #poll} has something other than {@link #PENDING}. */
  void onReady(Runnable action);

  @Override
  void close();
}
