package io.spillway.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import java.util.function.Consumer;

/**
 * The text of a message's content, a string or an array of parts, read the same way for chat
 * messages and Responses items: {@code text}, {@code input_text}, {@code output_text} and
 * {@code refusal} parts become text joined by newlines, image parts go to the caller, and any other
 * part is reported to {@link Unsupported}.
 */
public final class ContentText {
  private ContentText() {}

  /**
   * @param at the field's path, for errors ({@code messages[2].content})
   * @param imageType the API's image part ({@code image_url} in chat, {@code input_image} in Responses)
   * @param image receives each image part
   * @throws GatewayException 400 for content that is neither a string nor an array of typed parts
   */
  public static String of(JsonNode content, String at, String imageType, Consumer<JsonNode> image,
      Unsupported unsupported) {
    if (content == null || content.isNull()) {
      return "";
    }
    if (content.isTextual()) {
      return content.textValue();
    }
    if (!content.isArray()) {
      throw GatewayException.invalid("'" + at + "' must be a string or an array of content parts", at);
    }
    StringBuilder text = new StringBuilder();
    for (JsonNode part : content) {
      String type = Json.text(part, "type");
      if (type == null) {
        throw GatewayException.invalid("every part of '" + at + "' needs a 'type'", at);
      }
      switch (type) {
        case "text", "input_text", "output_text" -> append(text, Json.text(part, "text"));
        case "refusal" -> append(text, Json.text(part, "refusal"));
        default -> {
          if (type.equals(imageType)) {
            image.accept(part);
          } else {
            unsupported.add("'" + type + "' content", at);
          }
        }
      }
    }
    return text.toString();
  }

  /** An image part's link: {@code image_url} as a string or as {@code {"url": …}}; null when it has none. */
  public static String imageUrl(JsonNode part) {
    JsonNode image = part.get("image_url");
    return image != null && image.isObject() ? Json.text(image, "url") : Json.text(part, "image_url");
  }

  private static void append(StringBuilder text, String piece) {
    if (piece == null) {
      return;
    }
    if (!text.isEmpty()) {
      text.append('\n');
    }
    text.append(piece);
  }
}
