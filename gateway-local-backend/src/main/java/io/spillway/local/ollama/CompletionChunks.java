package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import java.util.ArrayList;
import java.util.List;

/**
 * The chunks of one streamed chat or text completion, what both streams share: the head every chunk
 * carries (one id, {@code created}, the serving model, Ollama's fingerprint), {@code "usage": null}
 * on each chunk when the client asked for {@code stream_options.include_usage}, and the ending: the
 * finish chunk, the usage chunk when asked for, {@code [DONE]}. One instance per stream.
 */
final class CompletionChunks {
  private final String object;
  private final String id;
  private final long created;
  private final boolean includeUsage;
  private String model;
  private boolean named;

  /** @param object {@code chat.completion.chunk} or {@code text_completion}; ids take {@code idPrefix} */
  CompletionChunks(String object, String idPrefix, String model, long created, boolean includeUsage) {
    this.object = object;
    this.id = Ids.next(idPrefix);
    this.model = model;
    this.created = created;
    this.includeUsage = includeUsage;
  }

  /** Notes a line of Ollama's answer: the first names the model that serves. */
  void read(JsonNode line) {
    if (!named) {
      named = true;
      String served = Json.text(line, "model");
      if (served != null) {
        model = served;
      }
    }
  }

  /** A chunk with {@code choice} as its only choice. */
  SseEvent chunk(ObjectNode choice) {
    ObjectNode chunk = head();
    chunk.putArray("choices").add(choice);
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return SseEvent.data(Json.toString(chunk));
  }

  /** {@code finish}, the usage of Ollama's {@code last} line when asked for, and {@code [DONE]}. */
  List<SseEvent> end(SseEvent finish, JsonNode last) {
    List<SseEvent> events = new ArrayList<>(3);
    events.add(finish);
    if (includeUsage) {
      ObjectNode usage = head();
      usage.putArray("choices");
      usage.set("usage", ChatTranslation.usage(last));
      events.add(SseEvent.data(Json.toString(usage)));
    }
    events.add(SseEvent.DONE);
    return events;
  }

  private ObjectNode head() {
    ObjectNode head = Json.object();
    head.put("id", id);
    head.put("object", object);
    head.put("created", created);
    head.put("model", model);
    head.put("system_fingerprint", OllamaBackend.FINGERPRINT);
    return head;
  }
}
