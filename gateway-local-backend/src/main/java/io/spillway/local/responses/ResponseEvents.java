package io.spillway.local.responses;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.Ids;
import java.util.ArrayList;
import java.util.List;

/**
 * The Responses API's typed stream events for one local answer, in the order OpenAI sends them,
 * each with its {@code sequence_number} and the right {@code output_index}:
 *
 * <pre>
 * response.created, response.in_progress
 * for text:   response.output_item.added (message), response.content_part.added,
 *             response.output_text.delta…, response.output_text.done, response.content_part.done,
 *             response.output_item.done
 * per call:   response.output_item.added (function_call), response.function_call_arguments.delta,
 *             response.function_call_arguments.done, response.output_item.done
 *             (custom tools: response.custom_tool_call_input.delta / .done)
 * response.completed (or response.incomplete), with the whole output and usage
 * </pre>
 *
 * A message item opens with the first piece of text, so an answer that only calls tools has no empty
 * message; an answer with neither gets one, as OpenAI's does. One instance per stream; not
 * thread-safe.
 */
public final class ResponseEvents {
  private final ResponseBuilder builder;
  private final List<ObjectNode> output = new ArrayList<>();
  private String model;
  private int sequence;
  private String messageId;
  private StringBuilder text;

  public ResponseEvents(ResponseBuilder builder) {
    this.builder = builder;
  }

  /** {@code response.created} and {@code response.in_progress}, for the model that serves. */
  public List<SseEvent> start(String servedModel) {
    this.model = servedModel;
    ObjectNode inProgress = builder.response(model, "in_progress", List.of(), ResponseBuilder.Usage.NONE);
    List<SseEvent> events = new ArrayList<>(2);
    events.add(event("response.created", Json.object().set("response", inProgress)));
    events.add(event("response.in_progress", Json.object().set("response", inProgress)));
    return events;
  }

  /** {@link #start} the first time, nothing after: for the first part of an answer, whichever it is. */
  public List<SseEvent> startOnce(String servedModel) {
    return model != null ? List.of() : start(servedModel);
  }

  /** The events for a piece of the answer's text (none for an empty piece). */
  public List<SseEvent> text(String piece) {
    List<SseEvent> events = new ArrayList<>(3);
    if (piece == null || piece.isEmpty()) {
      return events;
    }
    if (messageId == null) {
      openMessage(events);
    }
    text.append(piece);
    ObjectNode delta = position().put("delta", piece);
    delta.putArray("logprobs");
    events.add(event("response.output_text.delta", delta));
    return events;
  }

  /** The events for one whole tool call; an open message is finished first. */
  public List<SseEvent> call(ToolCall call) {
    List<SseEvent> events = new ArrayList<>(8);
    closeMessage(events, "completed");
    int index = output.size();
    String itemId = builder.itemId(call);
    events.add(event("response.output_item.added",
        Json.object().put("output_index", index).set("item", builder.call(itemId, call, "in_progress"))));
    ObjectNode done = builder.call(itemId, call, "completed");
    if (builder.isCustom(call)) {
      String input = done.path("input").asText();
      if (!input.isEmpty()) {
        events.add(event("response.custom_tool_call_input.delta",
            Json.object().put("item_id", itemId).put("output_index", index).put("delta", input)));
      }
      events.add(event("response.custom_tool_call_input.done",
          Json.object().put("item_id", itemId).put("output_index", index).put("input", input)));
    } else {
      events.add(event("response.function_call_arguments.delta",
          Json.object().put("item_id", itemId).put("output_index", index).put("delta", call.arguments())));
      events.add(event("response.function_call_arguments.done", Json.object().put("item_id", itemId)
          .put("output_index", index).put("name", done.path("name").asText()).put("arguments", call.arguments())));
    }
    events.add(event("response.output_item.done", Json.object().put("output_index", index).set("item", done)));
    output.add(done);
    return events;
  }

  /**
   * The closing events: the open message finished, and {@code response.completed} (or
   * {@code response.incomplete} when {@code cut} by the output limit) with the output and usage.
   */
  public List<SseEvent> finish(ResponseBuilder.Usage usage, boolean cut) {
    List<SseEvent> events = new ArrayList<>(6);
    if (messageId == null && output.isEmpty()) {
      openMessage(events);
    }
    closeMessage(events, cut ? "incomplete" : "completed");
    String status = cut ? "incomplete" : "completed";
    ObjectNode finished = builder.response(model, status, output, usage);
    events.add(event(cut ? "response.incomplete" : "response.completed", Json.object().set("response", finished)));
    return events;
  }

  private void openMessage(List<SseEvent> events) {
    messageId = Ids.next("msg_");
    text = new StringBuilder();
    ObjectNode item = Json.object();
    item.put("id", messageId);
    item.put("type", "message");
    item.put("status", "in_progress");
    item.put("role", "assistant");
    item.putArray("content");
    events.add(event("response.output_item.added", Json.object().put("output_index", output.size()).set("item", item)));
    ObjectNode part = Json.object().put("type", "output_text").put("text", "");
    part.putArray("annotations");
    events.add(event("response.content_part.added", position().set("part", part)));
  }

  private void closeMessage(List<SseEvent> events, String status) {
    if (messageId == null) {
      return;
    }
    String full = text.toString();
    ObjectNode textDone = position().put("text", full);
    textDone.putArray("logprobs");
    events.add(event("response.output_text.done", textDone));
    events.add(event("response.content_part.done", position().set("part", ResponseBuilder.outputText(full))));
    ObjectNode item = builder.message(messageId, full, status);
    events.add(event("response.output_item.done", Json.object().put("output_index", output.size()).set("item", item)));
    output.add(item);
    messageId = null;
    text = null;
  }

  private ObjectNode position() {
    return Json.object().put("item_id", messageId).put("output_index", output.size()).put("content_index", 0);
  }

  private SseEvent event(String type, ObjectNode fields) {
    ObjectNode event = Json.object();
    event.put("type", type);
    event.put("sequence_number", sequence++);
    event.setAll(fields);
    return new SseEvent(type, Json.toString(event));
  }
}
