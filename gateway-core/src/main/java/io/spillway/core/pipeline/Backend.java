package io.spillway.core.pipeline;

import java.util.concurrent.CompletionStage;

/**
 * An upstream that serves OpenAI-shaped requests: the cloud, or a local model server.
 *
 * <p>{@link #callAsync} is the one call to implement: a backend with a non-blocking client answers
 * there without taking a thread; one whose client blocks runs that work where blocking is allowed
 * ({@link Blocking#supply}). A caller that may block waits on it with {@link Blocking#await}.
 *
 * <p>An upstream that answered with an HTTP error is returned as a response with that status (buffered body) so the router can classify it; a
 * transport failure completes the stage with an {@link io.spillway.core.error.UpstreamException}. Implementations
 * are thread-safe.
 */
public interface Backend {
  /** {@link BackendKind#CLOUD} or {@link BackendKind#LOCAL}; its tag is the value of {@code x-spillway-backend}. */
  BackendKind kind();

  /**
   * The answer, once its head has arrived, without blocking the caller. Failures complete the stage
   * exceptionally; a backend may also throw them at once, which callers treat the same way.
   */
  CompletionStage<GatewayResponse> callAsync(GatewayRequest request);

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
