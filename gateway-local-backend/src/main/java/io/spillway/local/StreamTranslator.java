package io.spillway.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.sse.SseEvent;
import java.util.List;

/**
 * Turns a local server's streamed answer, one JSON object at a time (an Ollama NDJSON line, a chat
 * completions chunk), into the events of the API the client called. {@link TranslatedStream} feeds
 * it and decides when the stream ended. One instance per stream; not thread-safe.
 */
public interface StreamTranslator {
  /** The events for one object of the answer, its last one included. */
  List<SseEvent> line(JsonNode object);

  /**
   * Whether what was read so far is a whole answer even if the server stops sending without its
   * end marker (a chat chunk with a {@code finish_reason} is; Ollama's answer needs its done line).
   */
  default boolean whole() {
    return false;
  }

  /**
   * The closing events after the last object (finish reason, usage, {@code [DONE]} or
   * {@code response.completed}).
   *
   * @param last the last object of the answer (Ollama's done line carries the usage), or null when
   *     the server sent none
   */
  List<SseEvent> end(JsonNode last);
}
