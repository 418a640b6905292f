package io.spillway.core.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One Responses API exchange as the response store keeps it: what the client sent (its input items,
 * {@code item_reference}s resolved where Spillway held them, each with an id) and the response it got.
 *
 * @param id the response's id ({@code resp_…}), as the backend that served it issued it
 * @param origin the backend that issued the id: a cloud route's name, or {@code local}
 * @param previousId the {@code previous_response_id} the request continued, or null
 * @param chain the ids of the responses before it in its conversation, oldest first, as far as
 *     Spillway holds them (empty when {@code previousId} is null or not held)
 * @param input the request's input items
 * @param response the {@code response} object as the client got it
 * @param storedAtMillis when it was stored (epoch milliseconds, from the gateway's clock)
 */
public record StoredResponse(
    String id, String origin, String previousId, List<String> chain, ArrayNode input, ObjectNode response,
    long storedAtMillis) {

  public StoredResponse {
    chain = List.copyOf(chain);
  }

  /** The response's output items (empty when it has none). */
  public ArrayNode output() {
    JsonNode output = response.get("output");
    return output instanceof ArrayNode array ? array : Json.MAPPER.createArrayNode();
  }

  /** The input item or output item with {@code itemId}, or null. */
  public JsonNode item(String itemId) {
    for (ArrayNode items : List.of(input, output())) {
      for (JsonNode item : items) {
        if (itemId.equals(Json.text(item, "id"))) {
          return item;
        }
      }
    }
    return null;
  }

  /** Every item id it holds, input first. */
  public List<String> itemIds() {
    List<String> ids = new ArrayList<>();
    for (ArrayNode items : List.of(input, output())) {
      for (JsonNode item : items) {
        String itemId = Json.text(item, "id");
        if (itemId != null && !itemId.isEmpty()) {
          ids.add(itemId);
        }
      }
    }
    return ids;
  }

  /** The stored form: one JSON text. */
  public String toJson() {
    ObjectNode out = Json.object();
    out.put("id", id);
    out.put("origin", origin);
    if (previousId != null) {
      out.put("previous", previousId);
    }
    ArrayNode ids = out.putArray("chain");
    chain.forEach(ids::add);
    out.set("input", input);
    out.set("response", response);
    out.put("storedAt", storedAtMillis);
    return Json.toString(out);
  }

  /** Reads {@link #toJson()}'s form. */
  public static StoredResponse fromJson(String stored) {
    JsonNode node;
    try {
      node = Json.parse(stored);
    } catch (IOException e) {
      throw new UncheckedIOException("a stored response is not JSON", e);
    }
    List<String> chain = new ArrayList<>();
    node.path("chain").forEach(id -> chain.add(id.asText()));
    JsonNode input = node.get("input");
    JsonNode response = node.get("response");
    return new StoredResponse(Json.text(node, "id"), Json.text(node, "origin"), Json.text(node, "previous"), chain,
        input instanceof ArrayNode array ? array : Json.MAPPER.createArrayNode(),
        response instanceof ObjectNode object ? object : Json.object(), node.path("storedAt").asLong());
  }
}
