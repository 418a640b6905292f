package io.spillway.core.responses;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Attribute;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The stored state one Responses request refers to, read from the {@link ResponseStore} once by
 * {@link ResponseStateInterceptor} before the request is routed: the response its
 * {@code previous_response_id} names and the chain before it, and the items its
 * {@code item_reference}s name. Backends then {@link #expandFor expand} the request from it in
 * memory, without I/O, as they need:
 *
 * <ul>
 *   <li>the local backend always: the chain's input and output items, oldest first, then the
 *       request's own input, each reference replaced by its item; an id Spillway does not hold is a
 *       400 naming it, as OpenAI answers;
 *   <li>a cloud route only for what it did not issue itself (minted on local, or by another route):
 *       a {@code previous_response_id} the route issued, a reference to one of its own items and any
 *       id Spillway does not hold pass through untouched, so healthy traffic is not rewritten.
 * </ul>
 *
 * Items carried to a cloud route from elsewhere lose their ids (the route never saw them), and
 * reasoning items from elsewhere are left out (their encrypted content is another backend's).
 * Immutable.
 */
public final class StoredState {
  /** Set by {@link ResponseStateInterceptor} on a Responses request while the response store is on. */
  public static final Attribute<StoredState> KEY = Attribute.of("storedState");
  /** Set by {@link StoredStateBackend} as it calls: the origin (route name or {@code local}) of the attempt. */
  public static final Attribute<String> ORIGIN = Attribute.of("responseOrigin");
  /** The origin of answers the local backend gives. */
  public static final String LOCAL = "local";

  private final String previousId;
  private final List<StoredResponse> chain;
  private final Map<String, Held> items;

  /** An item Spillway holds and the backend that issued it. */
  public record Held(JsonNode item, String origin) {}

  /**
   * @param previousId the request's {@code previous_response_id}, or null
   * @param chain the responses of that conversation Spillway holds, oldest first, ending with the
   *     one {@code previousId} names; empty when it holds none of it
   * @param items the referenced items Spillway holds, by id
   */
  public StoredState(String previousId, List<StoredResponse> chain, Map<String, Held> items) {
    this.previousId = previousId;
    this.chain = List.copyOf(chain);
    this.items = Map.copyOf(items);
  }

  /** The request's {@code previous_response_id}, or null. */
  public String previousId() {
    return previousId;
  }

  /** The response {@code previous_response_id} names, or null when there is none or it is not held. */
  public StoredResponse previous() {
    return chain.isEmpty() ? null : chain.get(chain.size() - 1);
  }

  /** The ids of the conversation before this request, oldest first, as far as Spillway holds them. */
  public List<String> chainIds() {
    return chain.stream().map(StoredResponse::id).toList();
  }

  /** The held item with {@code id}, or null. */
  public Held item(String id) {
    return items.get(id);
  }

  /** The {@code item_reference} ids of a request's input, in order, each once. */
  public static Set<String> referencedItems(ObjectNode body) {
    Set<String> ids = new LinkedHashSet<>();
    JsonNode input = body.get("input");
    if (input != null && input.isArray()) {
      for (JsonNode item : input) {
        if ("item_reference".equals(Json.text(item, "type"))) {
          String id = Json.text(item, "id");
          if (id != null && !id.isEmpty()) {
            ids.add(id);
          }
        }
      }
    }
    return ids;
  }

  /**
   * {@code body} as the backend of {@code origin} must get it (the same instance when nothing
   * changes). For the local backend ({@code local} true) every stored id is expanded, and one not
   * held is a 400; for a cloud route only what it did not issue. What was left out is added to
   * {@code dropped} ({@code input.reasoning}).
   */
  public ObjectNode expandFor(ObjectNode body, String origin, boolean local, List<String> dropped) {
    boolean expandPrevious = false;
    if (previousId != null) {
      StoredResponse previous = previous();
      if (previous == null) {
        if (local) {
          throw previousNotFound(previousId);
        }
      } else {
        expandPrevious = local || !origin.equals(previous.origin());
      }
    }
    JsonNode input = body.get("input");
    ArrayNode own = Json.MAPPER.createArrayNode();
    boolean changed = expandPrevious;
    if (input != null && input.isTextual()) {
      if (expandPrevious) {
        own.addObject().put("role", "user").put("content", input.textValue());
      }
    } else if (input != null && input.isArray()) {
      for (int i = 0; i < input.size(); i++) {
        JsonNode item = input.get(i);
        if (!"item_reference".equals(Json.text(item, "type"))) {
          own.add(item);
          continue;
        }
        String id = Json.text(item, "id");
        Held held = id == null ? null : items.get(id);
        if (held == null) {
          if (local) {
            throw itemNotFound(id == null ? "" : id, "input[" + i + "].id");
          }
          own.add(item);
        } else if (!local && origin.equals(held.origin())) {
          own.add(item);
        } else {
          changed = true;
          carry(held.item(), held.origin(), origin, local, own, dropped);
        }
      }
    }
    if (!changed) {
      return body;
    }
    ArrayNode expanded = Json.MAPPER.createArrayNode();
    if (expandPrevious) {
      for (StoredResponse response : chain) {
        for (JsonNode item : response.input()) {
          carry(item, response.origin(), origin, local, expanded, dropped);
        }
        for (JsonNode item : response.output()) {
          carry(item, response.origin(), origin, local, expanded, dropped);
        }
      }
    }
    expanded.addAll(own);
    ObjectNode out = body.deepCopy();
    out.set("input", expanded);
    if (expandPrevious) {
      out.remove("previous_response_id");
    }
    return out;
  }

  /** Adds {@code item} (issued by {@code from}) to {@code out} as the backend of {@code to} may take it. */
  private static void carry(JsonNode item, String from, String to, boolean local, ArrayNode out, List<String> dropped) {
    if (local || from.equals(to)) {
      out.add(item);
      return;
    }
    if ("reasoning".equals(Json.text(item, "type"))) {
      if (!dropped.contains("input.reasoning")) {
        dropped.add("input.reasoning");
      }
      return;
    }
    if (item instanceof ObjectNode object && object.has("id")) {
      ObjectNode copy = object.deepCopy();
      copy.remove("id");
      out.add(copy);
    } else {
      out.add(item);
    }
  }

  /** OpenAI's answer to a {@code previous_response_id} it does not hold. */
  public static GatewayException previousNotFound(String id) {
    return new GatewayException(ErrorKind.INVALID_REQUEST, "Previous response with id '" + id + "' not found.",
        "previous_response_id", "previous_response_not_found", null, null);
  }

  /** OpenAI's answer to an {@code item_reference} it does not hold. */
  public static GatewayException itemNotFound(String id, String param) {
    return new GatewayException(ErrorKind.INVALID_REQUEST, "Item with id '" + id + "' not found.", param, null,
        null, null);
  }
}
