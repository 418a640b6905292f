package io.spillway.local;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A local server's streamed answer read one JSON object at a time, as the bytes arrive, polled like
 * an {@link io.spillway.core.sse.EventStream}: {@link #poll} answers an object, null at the end, or
 * {@link #PENDING} when no whole object has arrived; {@link #onReady} then says when to poll again.
 * A source that can only block blocks in {@link #poll} and answers {@code false} to
 * {@link #nonBlocking}. Not thread-safe, except {@link #close}.
 */
public interface UpstreamObjects {
  /** Not an object: none has arrived yet. Compared by identity; never handed to a translator. */
  JsonNode PENDING = new ObjectNode(JsonNodeFactory.instance);

  /**
   * The next object; null once the server said it has finished or the body ended; {@link #PENDING}
   * when none is whole yet. A part that is not a JSON object, a broken connection or a timeout
   * throws {@link io.spillway.core.error.UpstreamException}.
   */
  JsonNode poll();

  /**
   * Runs {@code action} once, as soon as {@link #poll} has something other than {@link #PENDING}
   * (at once when it already has); possibly on the thread that received the bytes, so it must be
   * quick. The default, for a source that never answers {@link #PENDING}, runs it at once.
   */
  default void onReady(Runnable action) {
    action.run();
  }

  /** Whether {@link #poll} never blocks. */
  default boolean nonBlocking() {
    return false;
  }

  /** Whether the server marked the end of its answer (Ollama's {@code "done": true} line, {@code [DONE]}). */
  boolean finished();

  /** Stops reading and releases the connection; idempotent. */
  void close();
}
