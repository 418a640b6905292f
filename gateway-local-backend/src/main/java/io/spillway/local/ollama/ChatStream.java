package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.StreamTranslator;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code /api/chat} NDJSON → {@code chat.completion.chunk} events: a role chunk first, a chunk per
 * piece of content or batch of tool calls, a finish chunk, a usage chunk when the client asked for
 * {@code stream_options.include_usage}, then {@code [DONE]}. One instance per stream.
 */
final class ChatStream implements StreamTranslator {
  private final CompletionChunks chunks;
  private boolean roleSent;
  private int toolCalls;

  ChatStream(String model, long created, boolean includeUsage) {
    this.chunks = new CompletionChunks("chat.completion.chunk", "chatcmpl-", model, created, includeUsage);
  }

  @Override
  public List<SseEvent> line(JsonNode line) {
    chunks.read(line);
    List<SseEvent> events = new ArrayList<>(2);
    if (!roleSent) {
      events.add(delta(Json.object().put("role", "assistant").put("content", ""), null));
      roleSent = true;
    }
    JsonNode message = line.path("message");
    String content = Json.text(message, "content");
    if (content != null && !content.isEmpty()) {
      events.add(delta(Json.object().put("content", content), null));
    }
    JsonNode calls = message.get("tool_calls");
    if (calls != null && calls.isArray() && !calls.isEmpty()) {
      ObjectNode delta = Json.object();
      delta.set("tool_calls", ChatTranslation.toolCalls(calls, toolCalls, true));
      toolCalls += calls.size();
      events.add(delta(delta, null));
    }
    return events;
  }

  @Override
  public List<SseEvent> end(JsonNode last) {
    return chunks.end(delta(Json.object(), ChatTranslation.finishReason(last, toolCalls > 0)), last);
  }

  private SseEvent delta(ObjectNode delta, String finishReason) {
    ObjectNode choice = Json.object();
    choice.put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    return chunks.chunk(choice);
  }
}
