package io.spillway.core.pipeline;

import java.util.concurrent.CompletionStage;

/**
 * An upstream that serves OpenAI-shaped requests: the cloud, or a local model server.
 *
 * <p>{@link #callAsync} is how the router calls: a backend with a non-blocking client answers there
 * without taking a thread, and {@link #call} waits for it; a backend that blocks implements only
 * {@link #call}, which {@link #callAsync} then runs on a virtual thread ({@link Blocking}).
 *
 * <p>An upstream that answered with an HTTP error is returned as a response with that status (buffered body) so the router can classify it; a
 * transport failure is thrown as an {@link io.spillway.core.error.UpstreamException}. Implementations
 * are thread-safe.
 */
public interface Backend {
  /** {@code cloud} or {@code local}: the value of {@code x-spillway-backend}. */
  String name();

  /** The answer, blocking the calling (virtual) thread until its head has arrived. */
  GatewayResponse call(GatewayRequest request);

  /**
   * The answer, once its head has arrived, without blocking the caller. The default runs
   * {@link #call} where blocking is allowed; a backend whose client does not block answers here
   * directly. Failures complete the stage exceptionally, as {@link #call} would throw them.
   */
  default CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
    return Blocking.supply(() -> call(request));
  }

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
