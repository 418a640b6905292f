package io.spillway.core.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;

/**
 * What the usage readers look for in a stream event's JSON data, read in one streaming pass that
 * builds only those values: the top-level {@code type} (when a string) and {@code usage}, and the
 * {@code usage} inside a top-level {@code response} (the Responses API's {@code response.completed},
 * which carries the whole answer) or {@code message} object (Anthropic's {@code message_start}).
 * Everything else, the answer's output and text above all, is skipped without being made into a tree
 * or strings. Data that is not one JSON object reads as {@link #NONE}, as a parse would fail.
 *
 * @param object whether the data is one JSON object
 * @param type the top-level {@code type}, or null
 * @param usage the top-level {@code usage}, or null
 * @param responseUsage {@code response.usage}, or null
 * @param messageUsage {@code message.usage}, or null
 */
public record EventFields(boolean object, String type, JsonNode usage, JsonNode responseUsage, JsonNode messageUsage) {
  /** Data that is not a JSON object. */
  public static final EventFields NONE = new EventFields(false, null, null, null, null);

  /** The fields of {@code data}. */
  public static EventFields read(String data) {
    try (JsonParser parser = Json.MAPPER.createParser(data)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        return NONE;
      }
      String type = null;
      JsonNode usage = null;
      JsonNode responseUsage = null;
      JsonNode messageUsage = null;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String name = parser.currentName();
        JsonToken value = parser.nextToken();
        switch (name) {
          case "type" -> {
            type = value == JsonToken.VALUE_STRING ? parser.getText() : null;
            parser.skipChildren();
          }
          case "usage" -> usage = Json.VALUE_READER.readTree(parser);
          case "response" -> responseUsage = usageInside(parser, value);
          case "message" -> messageUsage = usageInside(parser, value);
          default -> parser.skipChildren();
        }
      }
      if (parser.currentToken() != JsonToken.END_OBJECT || parser.nextToken() != null) {
        return NONE;
      }
      return new EventFields(true, type, usage, responseUsage, messageUsage);
    } catch (IOException | RuntimeException e) {
      return NONE;
    }
  }

  /** The {@code usage} of the object the parser is at (skipping the rest of it), or null. */
  private static JsonNode usageInside(JsonParser parser, JsonToken value) throws IOException {
    if (value != JsonToken.START_OBJECT) {
      parser.skipChildren();
      return null;
    }
    JsonNode usage = null;
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String name = parser.currentName();
      parser.nextToken();
      if (name.equals("usage")) {
        usage = Json.VALUE_READER.readTree(parser);
      } else {
        parser.skipChildren();
      }
    }
    return usage;
  }
}
