package io.spillway.local.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import io.spillway.local.StreamTranslator;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A chat completions stream told as Anthropic's Messages stream, in its order: {@code message_start}
 * and a {@code ping} with the first chunk; for each run of text a text block
 * ({@code content_block_start}, {@code text_delta}s, {@code content_block_stop}); for each tool
 * call a {@code tool_use} block whose arguments come as {@code input_json_delta}s; at the end
 * {@code message_delta} with the stop reason and the usage (input and output, from the stream's
 * usage chunk), then {@code message_stop}. One block is open at a time, as Anthropic streams them.
 * One instance per stream; not thread-safe.
 */
final class MessageEvents implements StreamTranslator {
  private final String model;
  private final String id = Ids.next("msg_");
  private boolean started;
  private int nextIndex;
  /** The open block's index, -1 when none is open. */
  private int openIndex = -1;
  /** The chat tool call index the open block streams, -1 for a text block. */
  private int openCall = -1;
  /** Each chat tool call index seen, by the block index it got. */
  private final Map<Integer, Integer> callBlocks = new HashMap<>();
  private String finishReason;
  private JsonNode usage;

  MessageEvents(String model) {
    this.model = model;
  }

  @Override
  public List<SseEvent> line(JsonNode chunk) {
    List<SseEvent> events = new ArrayList<>();
    start(events, chunk);
    if (chunk.get("usage") != null && chunk.get("usage").isObject()) {
      usage = chunk.get("usage");
    }
    for (JsonNode choice : chunk.path("choices")) {
      JsonNode delta = choice.path("delta");
      String text = Json.text(delta, "content");
      if (text != null && !text.isEmpty()) {
        if (openIndex < 0 || openCall >= 0) {
          close(events);
          open(events, Json.object().put("type", "text").put("text", ""), -1);
        }
        events.add(event("content_block_delta", Json.object().put("index", openIndex)
            .set("delta", Json.object().put("type", "text_delta").put("text", text))));
      }
      for (JsonNode call : delta.path("tool_calls")) {
        int callIndex = call.path("index").asInt(callBlocks.size());
        if (!callBlocks.containsKey(callIndex) || openCall != callIndex) {
          if (callBlocks.containsKey(callIndex)) {
            continue; // a late fragment of a call whose block is closed: Anthropic cannot reopen it
          }
          close(events);
          String callId = Json.text(call, "id");
          ObjectNode block = Json.object().put("type", "tool_use")
              .put("id", callId != null && !callId.isEmpty() ? callId : Ids.next("toolu_"))
              .put("name", call.path("function").path("name").asText(""));
          block.putObject("input");
          callBlocks.put(callIndex, nextIndex);
          open(events, block, callIndex);
        }
        String arguments = call.path("function").path("arguments").asText("");
        if (!arguments.isEmpty()) {
          events.add(event("content_block_delta", Json.object().put("index", openIndex)
              .set("delta", Json.object().put("type", "input_json_delta").put("partial_json", arguments))));
        }
      }
      String finish = Json.text(choice, "finish_reason");
      if (finish != null) {
        finishReason = finish;
      }
    }
    return events;
  }

  @Override
  public boolean whole() {
    return finishReason != null;
  }

  @Override
  public List<SseEvent> end(JsonNode last) {
    List<SseEvent> events = new ArrayList<>();
    start(events, last);
    close(events);
    ObjectNode delta = Json.object();
    delta.put("stop_reason", MessageShape.stopReason(
        finishReason == null && !callBlocks.isEmpty() ? "tool_calls" : finishReason));
    delta.putNull("stop_sequence");
    ObjectNode messageDelta = Json.object();
    messageDelta.set("delta", delta);
    messageDelta.set("usage", MessageShape.usage(usage));
    events.add(event("message_delta", messageDelta));
    events.add(event("message_stop", Json.object()));
    return events;
  }

  private void start(List<SseEvent> events, JsonNode chunk) {
    if (started) {
      return;
    }
    started = true;
    ObjectNode start = Json.object();
    start.set("message", MessageShape.start(id, ChatAsMessage.servedModel(chunk, model)));
    events.add(event("message_start", start));
    events.add(event("ping", Json.object()));
  }

  private void open(List<SseEvent> events, ObjectNode block, int call) {
    openIndex = nextIndex++;
    openCall = call;
    events.add(event("content_block_start", Json.object().put("index", openIndex).set("content_block", block)));
  }

  private void close(List<SseEvent> events) {
    if (openIndex >= 0) {
      events.add(event("content_block_stop", Json.object().put("index", openIndex)));
      openIndex = -1;
      openCall = -1;
    }
  }

  /** An event named {@code type} whose data carries {@code "type": type} first, as Anthropic's do. */
  static SseEvent event(String type, ObjectNode fields) {
    ObjectNode data = Json.object().put("type", type);
    data.setAll(fields);
    return new SseEvent(type, Json.toString(data));
  }
}
