package io.spillway.core.error;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;

/** The OpenAI error object: {@code {"error":{"message","type","param","code"}}}. */
public record OpenAiError(String message, String type, String param, String code) {

  public ObjectNode toJson() {
    ObjectNode root = Json.MAPPER.createObjectNode();
    ObjectNode error = root.putObject("error");
    error.put("message", message);
    error.put("type", type);
    error.put("param", param);
    error.put("code", code);
    return root;
  }

  public byte[] toBytes() {
    return Json.toBytes(toJson());
  }
}
