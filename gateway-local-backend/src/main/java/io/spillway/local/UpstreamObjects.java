package io.spillway.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

/**
 * A local server's streamed answer read one JSON object at a time, as the bytes arrive. Not
 * thread-safe, except {@link #close}.
 */
public interface UpstreamObjects {
  /**
   * The next object; null once the server said it has finished or the body ended. A part that is
   * not a JSON object throws {@link io.spillway.core.error.UpstreamException}.
   */
  JsonNode next() throws IOException;

  /** Whether the server marked the end of its answer (Ollama's {@code "done": true} line, {@code [DONE]}). */
  boolean finished();

  /** Stops reading and releases the connection; idempotent. */
  void close();
}
