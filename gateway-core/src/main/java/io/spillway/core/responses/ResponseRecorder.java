package io.spillway.core.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.redact.Redactor;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one Responses exchange in the store once its {@code response} object is known (a buffered
 * answer's body, a stream's {@code response.completed}): the client's input items, each with an id
 * and every {@code item_reference} Spillway holds replaced by its item, and the response, the
 * gateway's own secrets redacted as in every answer. A failure
 * to store is logged, never the client's: the answer it got stands.
 */
final class ResponseRecorder {
  private static final Logger log = LoggerFactory.getLogger(ResponseRecorder.class);

  private final ResponseStore store;
  private final String team;
  private final ObjectNode request;
  private final StoredState state;
  private final String requestId;
  private final Clock clock;
  private final Redactor redactor;

  ResponseRecorder(ResponseStore store, String team, ObjectNode request, StoredState state, String requestId,
      Clock clock, Redactor redactor) {
    this.redactor = redactor;
    this.store = store;
    this.team = team;
    this.request = request;
    this.state = state;
    this.requestId = requestId;
    this.clock = clock;
  }

  /** Whether the request asks the server to store it ({@code store} true, the API's default). */
  static boolean wantsStore(ObjectNode request) {
    JsonNode store = request.get("store");
    return store == null || store.isNull() || store.asBoolean(true);
  }

  /** Stores {@code response}, answered by the backend of {@code origin}, if it is a response object with an id. */
  void record(JsonNode response, String origin) {
    if (!(response instanceof ObjectNode object) || origin == null) {
      return;
    }
    String id = Json.text(object, "id");
    if (id == null || id.isEmpty() || !"response".equals(Json.text(object, "object"))) {
      return;
    }
    List<String> chain = new ArrayList<>();
    StoredResponse previous = state.previous();
    if (previous != null) {
      chain.addAll(state.chainIds());
    }
    try {
      StoredResponse stored = new StoredResponse(id, origin, state.previousId(), chain, input(), object,
          clock.millis());
      String json = stored.toJson();
      if (redactor.contains(json)) {
        stored = StoredResponse.fromJson(redactor.redact(json));
      }
      store.put(team, stored);
    } catch (RuntimeException e) {
      log.warn("request {}: the response {} could not be stored: {}", requestId, id, e.toString());
    }
  }

  /** The request's input as stored: a list of items, each with an id, references resolved where held. */
  private ArrayNode input() {
    ArrayNode out = Json.MAPPER.createArrayNode();
    JsonNode input = request.get("input");
    if (input == null || input.isNull()) {
      return out;
    }
    if (input.isTextual()) {
      out.add(message("user", input));
      return out;
    }
    if (!input.isArray()) {
      return out;
    }
    for (JsonNode item : input) {
      if (!(item instanceof ObjectNode object)) {
        continue;
      }
      String type = Json.text(object, "type");
      if ("item_reference".equals(type)) {
        StoredState.Held held = state.item(Json.text(object, "id"));
        out.add(held != null ? held.item() : object);
        continue;
      }
      ObjectNode copy = object.deepCopy();
      if (type == null && copy.has("role")) {
        copy.put("type", "message");
        type = "message";
      }
      if ("message".equals(type)) {
        JsonNode content = copy.get("content");
        if (content != null && content.isTextual()) {
          copy.set("content", parts(Json.text(copy, "role"), content));
        }
      }
      if (!copy.hasNonNull("id")) {
        copy.put("id", StoredIds.forItem(type));
      }
      out.add(copy);
    }
    return out;
  }

  private static ObjectNode message(String role, JsonNode text) {
    ObjectNode message = Json.object();
    message.put("id", StoredIds.forItem("message"));
    message.put("type", "message");
    message.put("role", role);
    message.set("content", parts(role, text));
    message.put("status", "completed");
    return message;
  }

  /** A string content as the parts OpenAI lists it with. */
  private static ArrayNode parts(String role, JsonNode text) {
    ArrayNode parts = Json.MAPPER.createArrayNode();
    parts.addObject().put("type", "assistant".equals(role) ? "output_text" : "input_text").set("text", text);
    return parts;
  }
}
