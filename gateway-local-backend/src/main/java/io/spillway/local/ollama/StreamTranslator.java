package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.sse.SseEvent;
import java.util.List;

/** Turns Ollama's NDJSON lines into OpenAI server-sent events, one line at a time. */
interface StreamTranslator {
  /** The events for one line (the final {@code done: true} line included). */
  List<SseEvent> line(JsonNode line);

  /** The closing events after the final line (finish reason, usage, {@code [DONE]}). */
  List<SseEvent> done(JsonNode last);
}
