package io.spillway.core.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

/**
 * What the stages that account for an answer read from a buffered JSON answer: its {@code usage},
 * its {@code error} and its {@code model}. Read in one streaming pass over the bytes that builds
 * only those fields (small objects) and skips everything else: the choices, the output items and
 * their text are never made into a tree or strings. The whole body is still checked to be one JSON
 * object (the same rules as {@link Json#parse}), so an answer that is not JSON reads as
 * {@link #NOT_JSON}, as it would from a tree.
 *
 * @param json whether the body is one JSON object
 * @param usage the top-level {@code usage} value, or null
 * @param error the top-level {@code error} value, or null
 * @param model the top-level {@code model} when it is a string, or null
 */
public record AnswerSummary(boolean json, JsonNode usage, JsonNode error, String model) {
  /** A body that is empty, not JSON, or not a JSON object. */
  public static final AnswerSummary NOT_JSON = new AnswerSummary(false, null, null, null);

  /** The summary of {@code body}. */
  public static AnswerSummary read(byte[] body) {
    if (body == null || body.length == 0) {
      return NOT_JSON;
    }
    try (JsonParser parser = Json.MAPPER.createParser(body)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return NOT_JSON;
      }
      JsonNode usage = null;
      JsonNode error = null;
      String model = null;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken value = parser.nextToken();
        switch (name) {
          case "usage" -> usage = Json.VALUE_READER.readTree(parser);
          case "error" -> error = Json.VALUE_READER.readTree(parser);
          case "model" -> {
            model = value == JsonToken.VALUE_STRING ? parser.getText() : null;
            parser.skipChildren();
          }
          default -> parser.skipChildren();
        }
      }
      if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
        return NOT_JSON;
      }
      return new AnswerSummary(true, usage, error, model);
    } catch (IOException | RuntimeException e) {
      return NOT_JSON;
    }
  }

  /** The summary of an answer already read as {@code tree} (null when it is not JSON). */
  public static AnswerSummary of(JsonNode tree) {
    if (tree == null || !tree.isObject()) {
      return NOT_JSON;
    }
    JsonNode model = tree.get("model");
    return new AnswerSummary(true, tree.get("usage"), tree.get("error"),
        model != null && model.isTextual() ? model.textValue() : null);
  }
}
