package io.spillway.local.openai;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Translation;
import io.spillway.local.responses.ResponseBuilder;
import io.spillway.local.responses.ResponseEvents;
import io.spillway.local.responses.ToolCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code chat.completion.chunk}s as the Responses API's typed events: text deltas are passed on as
 * they arrive; a tool call's pieces (its id and name first, then its arguments in pieces, by
 * {@code index}) are gathered and the call is sent whole when the answer ends, so a custom tool's
 * input can be taken out of its arguments. Usage comes from the last chunk
 * ({@code stream_options.include_usage}). The answer is whole once a chunk gave a
 * {@code finish_reason}. One instance per stream; not thread-safe.
 */
final class ChatChunksAsResponseEvents implements StreamTranslator {
  private final ResponseEvents events;
  private final Map<Integer, PartialCall> calls = new TreeMap<>();
  private final String localModel;
  private String finishReason;
  private ResponseBuilder.Usage usage = ResponseBuilder.Usage.NONE;

  ChatChunksAsResponseEvents(ResponseEvents events, String localModel) {
    this.events = events;
    this.localModel = localModel;
  }

  @Override
  public List<SseEvent> line(JsonNode chunk) {
    List<SseEvent> out = new ArrayList<>(events.startOnce(Translation.servedModel(chunk, localModel)));
    JsonNode chunkUsage = chunk.get("usage");
    if (chunkUsage != null && chunkUsage.isObject()) {
      usage = ResponsesOverChat.usage(chunkUsage);
    }
    JsonNode choice = chunk.path("choices").path(0);
    if (choice.isMissingNode()) {
      return out;
    }
    JsonNode delta = choice.path("delta");
    out.addAll(events.text(Json.text(delta, "content")));
    for (JsonNode piece : delta.path("tool_calls")) {
      int index = piece.path("index").asInt(calls.size());
      PartialCall call = calls.computeIfAbsent(index, i -> new PartialCall());
      String id = Json.text(piece, "id");
      if (id != null && !id.isEmpty()) {
        call.id = id;
      }
      String name = Json.text(piece.path("function"), "name");
      if (name != null && !name.isEmpty()) {
        call.name = name;
      }
      String arguments = Json.text(piece.path("function"), "arguments");
      if (arguments != null) {
        call.arguments.append(arguments);
      }
    }
    String reason = Json.text(choice, "finish_reason");
    if (reason != null) {
      finishReason = reason;
    }
    return out;
  }

  @Override
  public boolean whole() {
    return finishReason != null;
  }

  @Override
  public List<SseEvent> end(JsonNode last) {
    List<SseEvent> out = new ArrayList<>(events.startOnce(localModel));
    for (PartialCall call : calls.values()) {
      String arguments = call.arguments.isEmpty() ? "{}" : call.arguments.toString();
      out.addAll(events.call(new ToolCall(call.id != null ? call.id : Ids.next("call_"),
          call.name != null ? call.name : "", arguments)));
    }
    out.addAll(events.finish(usage, "length".equals(finishReason)));
    return out;
  }

  /** A tool call as its pieces arrive. */
  private static final class PartialCall {
    private String id;
    private String name;
    private final StringBuilder arguments = new StringBuilder();
  }
}
