package io.spillway.local.openai;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import io.spillway.local.responses.ResponseBuilder;
import io.spillway.local.responses.ResponseEvents;
import io.spillway.local.responses.ToolCall;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.TreeMap;

/**
 * A {@code chat.completion.chunk} stream read as the Responses API's typed events: text deltas are
 * passed on as they arrive; a tool call's pieces (its id and name first, then its arguments in
 * pieces, by {@code index}) are gathered and the call is sent whole when the answer ends, so a custom
 * tool's input can be taken out of its arguments. Usage comes from the last chunk
 * ({@code stream_options.include_usage}). An {@code error} chunk, or an end before any
 * {@code finish_reason} or {@code [DONE]}, fails the stream. Each {@link #next} reads at most the
 * chunks it needs for one event. Not thread-safe, except {@link #close}.
 */
final class ChatChunksAsResponseEvents implements EventStream {
  private final String backend;
  private final EventStream upstream;
  private final ResponseEvents events;
  private final ArrayDeque<SseEvent> pending = new ArrayDeque<>();
  private final Map<Integer, PartialCall> calls = new TreeMap<>();
  private String model;
  private String finishReason;
  private ResponseBuilder.Usage usage = ResponseBuilder.Usage.NONE;
  private boolean begun;
  private boolean finished;
  private boolean started;

  ChatChunksAsResponseEvents(String backend, EventStream upstream, ResponseEvents events, String model) {
    this.backend = backend;
    this.upstream = upstream;
    this.events = events;
    this.model = model;
  }

  @Override
  public SseEvent next() {
    while (pending.isEmpty()) {
      if (finished) {
        return null;
      }
      SseEvent chunk = upstream.next();
      if (chunk == null || chunk.isDone()) {
        if (chunk == null && finishReason == null) {
          close();
          throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
              "The " + backend + " backend ended the stream before it was complete", null);
        }
        finish();
      } else {
        chunk(parse(chunk));
      }
    }
    started = true;
    return pending.poll();
  }

  private JsonNode parse(SseEvent chunk) {
    try {
      JsonNode json = Json.parse(chunk.data());
      if (json != null && json.isObject()) {
        return json;
      }
    } catch (IOException e) {
      // reported below
    }
    close();
    throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
        "The " + backend + " backend sent a stream chunk that is not a JSON object", null);
  }

  private void chunk(JsonNode chunk) {
    JsonNode error = chunk.get("error");
    if (error != null && !error.isNull()) {
      close();
      String message = error.isObject() ? Json.text(error, "message") : error.asText();
      throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
          "The " + backend + " backend failed in the middle of the answer: " + message, null);
    }
    if (!begun) {
      begun = true;
      model = ResponsesOverChat.servedModel(chunk, model);
      pending.addAll(events.start(model));
    }
    JsonNode chunkUsage = chunk.get("usage");
    if (chunkUsage != null && chunkUsage.isObject()) {
      usage = ResponsesOverChat.usage(chunkUsage);
    }
    JsonNode choice = chunk.path("choices").path(0);
    if (choice.isMissingNode()) {
      return;
    }
    JsonNode delta = choice.path("delta");
    pending.addAll(events.text(Json.text(delta, "content")));
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
  }

  private void finish() {
    finished = true;
    if (!begun) {
      begun = true;
      pending.addAll(events.start(model));
    }
    for (PartialCall call : calls.values()) {
      String arguments = call.arguments.isEmpty() ? "{}" : call.arguments.toString();
      pending.addAll(events.call(new ToolCall(call.id != null ? call.id : Ids.next("call_"),
          call.name != null ? call.name : "", arguments)));
    }
    pending.addAll(events.finish(usage, "length".equals(finishReason)));
    upstream.close();
  }

  @Override
  public void close() {
    upstream.close();
  }

  @Override
  public boolean started() {
    return started;
  }

  /** A tool call as its pieces arrive. */
  private static final class PartialCall {
    private String id;
    private String name;
    private final StringBuilder arguments = new StringBuilder();
  }
}
