package io.spillway.core.pipeline;

/**
 * An upstream that serves OpenAI-shaped requests: the cloud, or a local model server.
 *
 * <p>{@link #call} blocks the calling virtual thread. An upstream that answered with an HTTP error
 * is returned as a response with that status (buffered body) so the router can classify it; a
 * transport failure is thrown as an {@link io.spillway.core.error.UpstreamException}. Implementations
 * are thread-safe.
 */
public interface Backend {
  /** {@code cloud} or {@code local}: the value of {@code x-spillway-backend}. */
  String name();

  GatewayResponse call(GatewayRequest request);

  /** Whether the backend answers at all right now; cheap, may use a cached probe. */
  default boolean ready() {
    return true;
  }

  /**
   * Asks the backend to load its models now, because traffic may be about to arrive (the router
   * calls this when the first capacity answer of a streak comes back from the cloud). Must not
   * block for long and must not throw; the default does nothing.
   */
  default void warmUp() {}
}
