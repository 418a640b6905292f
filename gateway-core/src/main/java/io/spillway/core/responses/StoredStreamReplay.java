package io.spillway.core.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import java.util.ArrayList;
import java.util.List;

/**
 * A stored response told again as the Responses API streams one, for
 * {@code GET /v1/responses/{id}?stream=true}: the typed events in OpenAI's order, each with its
 * {@code sequence_number} (from 0) and {@code output_index}:
 *
 * <pre>
 * response.created, response.in_progress (the response in progress: no output, no usage)
 * per output item:
 *   response.output_item.added (the item in progress, without its content)
 *   a message:        per content part response.content_part.added, then response.output_text.delta
 *                     and response.output_text.done (a refusal: response.refusal.delta / .done),
 *                     response.content_part.done
 *   a function call:  response.function_call_arguments.delta, response.function_call_arguments.done
 *   a custom call:    response.custom_tool_call_input.delta, response.custom_tool_call_input.done
 *   response.output_item.done (the item as stored)
 * response.completed, response.incomplete or response.failed (after the stored status), with the
 * whole response as stored
 * </pre>
 *
 * The content is the stored content; how the original stream cut it into deltas is not kept, so each
 * part's text comes as one delta. Other item kinds (reasoning, hosted-tool records) are told by their
 * added and done events alone. {@code starting_after} leaves out the events up to that sequence
 * number, as OpenAI's resumption does.
 */
final class StoredStreamReplay {
  private final List<SseEvent> events = new ArrayList<>();
  private int sequence;

  private StoredStreamReplay() {}

  /** The events of {@code response}, those after sequence number {@code startingAfter} (-1: all). */
  static List<SseEvent> of(ObjectNode response, long startingAfter) {
    StoredStreamReplay replay = new StoredStreamReplay();
    replay.tell(response);
    return startingAfter < 0 ? replay.events
        : replay.events.subList((int) Math.min(replay.events.size(), startingAfter + 1), replay.events.size());
  }

  private void tell(ObjectNode response) {
    ObjectNode inProgress = response.deepCopy();
    inProgress.put("status", "in_progress");
    inProgress.putArray("output");
    inProgress.putNull("usage");
    emit("response.created", Json.object().set("response", inProgress));
    emit("response.in_progress", Json.object().set("response", inProgress));
    JsonNode output = response.path("output");
    for (int index = 0; index < output.size(); index++) {
      item(index, output.get(index));
    }
    String status = String.valueOf(Json.text(response, "status"));
    String terminal = switch (status) {
      case "incomplete" -> "response.incomplete";
      case "failed" -> "response.failed";
      default -> "response.completed";
    };
    emit(terminal, Json.object().set("response", response));
  }

  private void item(int index, JsonNode item) {
    if (!(item instanceof ObjectNode stored)) {
      return;
    }
    String type = String.valueOf(Json.text(stored, "type"));
    String itemId = Json.text(stored, "id");
    ObjectNode opening = stored.deepCopy();
    if (opening.has("status")) {
      opening.put("status", "in_progress");
    }
    switch (type) {
      case "message" -> opening.putArray("content");
      case "function_call" -> opening.put("arguments", "");
      case "custom_tool_call" -> opening.put("input", "");
      default -> { }
    }
    emit("response.output_item.added", Json.object().put("output_index", index).set("item", opening));
    switch (type) {
      case "message" -> {
        JsonNode content = stored.path("content");
        for (int part = 0; part < content.size(); part++) {
          contentPart(itemId, index, part, content.get(part));
        }
      }
      case "function_call" -> {
        String arguments = String.valueOf(Json.text(stored, "arguments"));
        emit("response.function_call_arguments.delta", at(itemId, index).put("delta", arguments));
        ObjectNode done = at(itemId, index);
        if (Json.text(stored, "name") != null) {
          done.put("name", Json.text(stored, "name"));
        }
        emit("response.function_call_arguments.done", done.put("arguments", arguments));
      }
      case "custom_tool_call" -> {
        String input = String.valueOf(Json.text(stored, "input"));
        emit("response.custom_tool_call_input.delta", at(itemId, index).put("delta", input));
        emit("response.custom_tool_call_input.done", at(itemId, index).put("input", input));
      }
      default -> { }
    }
    emit("response.output_item.done", Json.object().put("output_index", index).set("item", stored));
  }

  private void contentPart(String itemId, int index, int part, JsonNode stored) {
    boolean refusal = "refusal".equals(Json.text(stored, "type"));
    ObjectNode empty = stored.deepCopy();
    empty.put(refusal ? "refusal" : "text", "");
    if (!refusal && empty.has("annotations")) {
      empty.putArray("annotations");
    }
    emit("response.content_part.added", at(itemId, index).put("content_index", part).set("part", empty));
    String text = String.valueOf(Json.text(stored, refusal ? "refusal" : "text"));
    if (refusal) {
      emit("response.refusal.delta", at(itemId, index).put("content_index", part).put("delta", text));
      emit("response.refusal.done", at(itemId, index).put("content_index", part).put("refusal", text));
    } else {
      ObjectNode delta = at(itemId, index).put("content_index", part).put("delta", text);
      delta.putArray("logprobs");
      emit("response.output_text.delta", delta);
      ObjectNode done = at(itemId, index).put("content_index", part).put("text", text);
      done.putArray("logprobs");
      emit("response.output_text.done", done);
    }
    emit("response.content_part.done", at(itemId, index).put("content_index", part).set("part", stored));
  }

  private static ObjectNode at(String itemId, int index) {
    ObjectNode fields = Json.object();
    if (itemId != null) {
      fields.put("item_id", itemId);
    }
    return fields.put("output_index", index);
  }

  private void emit(String type, ObjectNode fields) {
    ObjectNode event = Json.object().put("type", type).put("sequence_number", sequence++);
    event.setAll(fields);
    events.add(new SseEvent(type, Json.toString(event)));
  }

}
