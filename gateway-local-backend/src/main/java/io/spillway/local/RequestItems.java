package io.spillway.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import java.util.function.BiConsumer;

/**
 * The items of a request's array ({@code messages}, {@code input}) as translations read them: each
 * must be an object, and each is named by its path ({@code messages[2]}) in the 400 a malformed
 * one gets.
 */
public final class RequestItems {
  private RequestItems() {}

  /** Gives each item of {@code array} (the request's field {@code name}) with its path; 400 for an item that is not an object. */
  public static void each(JsonNode array, String name, BiConsumer<JsonNode, String> item) {
    for (int i = 0; i < array.size(); i++) {
      JsonNode value = array.get(i);
      String at = name + "[" + i + "]";
      if (!value.isObject()) {
        throw GatewayException.invalid("'" + at + "' must be an object", at);
      }
      item.accept(value, at);
    }
  }

  /** The item's {@code role}; 400 naming its path when it has none. */
  public static String role(JsonNode item, String at) {
    String role = Json.text(item, "role");
    if (role == null) {
      throw GatewayException.invalid("'" + at + ".role' is missing", at + ".role");
    }
    return role;
  }
}
