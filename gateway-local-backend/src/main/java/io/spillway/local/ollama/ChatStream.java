package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code /api/chat} NDJSON → {@code chat.completion.chunk} events: a role chunk first, a chunk per
 * piece of content or batch of tool calls, a finish chunk, a usage chunk when the client asked for
 * {@code stream_options.include_usage}, then {@code [DONE]}. One instance per stream.
 */
final class ChatStream implements StreamTranslator {
  private final String id = Ids.next("chatcmpl-");
  private final long created;
  private final boolean includeUsage;
  private String model;
  private boolean roleSent;
  private int toolCalls;

  ChatStream(String model, long created, boolean includeUsage) {
    this.model = model;
    this.created = created;
    this.includeUsage = includeUsage;
  }

  @Override
  public List<SseEvent> line(JsonNode line) {
    List<SseEvent> events = new ArrayList<>(2);
    String served = Json.text(line, "model");
    if (served != null && !roleSent) {
      model = served;
    }
    if (!roleSent) {
      ObjectNode delta = Json.object().put("role", "assistant").put("content", "");
      events.add(chunk(delta, null));
      roleSent = true;
    }
    JsonNode message = line.path("message");
    String content = Json.text(message, "content");
    if (content != null && !content.isEmpty()) {
      events.add(chunk(Json.object().put("content", content), null));
    }
    JsonNode calls = message.get("tool_calls");
    if (calls != null && calls.isArray() && !calls.isEmpty()) {
      ObjectNode delta = Json.object();
      delta.set("tool_calls", ChatTranslation.toolCalls(calls, toolCalls, true));
      toolCalls += calls.size();
      events.add(chunk(delta, null));
    }
    return events;
  }

  @Override
  public List<SseEvent> done(JsonNode last) {
    List<SseEvent> events = new ArrayList<>(3);
    events.add(chunk(Json.object(), ChatTranslation.finishReason(last, toolCalls > 0)));
    if (includeUsage) {
      ObjectNode usage = head();
      usage.putArray("choices");
      usage.set("usage", ChatTranslation.usage(last));
      events.add(SseEvent.data(Json.toString(usage)));
    }
    events.add(SseEvent.DONE);
    return events;
  }

  private SseEvent chunk(ObjectNode delta, String finishReason) {
    ObjectNode chunk = head();
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return SseEvent.data(Json.toString(chunk));
  }

  private ObjectNode head() {
    ObjectNode chunk = Json.object();
    chunk.put("id", id);
    chunk.put("object", "chat.completion.chunk");
    chunk.put("created", created);
    chunk.put("model", model);
    chunk.put("system_fingerprint", OllamaBackend.FINGERPRINT);
    return chunk;
  }
}
