package io.spillway.core.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import io.spillway.core.tokens.PromptPieces;
import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * Parses and checks a request body once, before any stage sees it (an OpenAI one, or Anthropic's
 * Messages API through {@link AnthropicRequests}). Only what Spillway itself
 * relies on is checked; every other field passes through untouched for the upstream to judge.
 */
public final class RequestParser {
  /** Larger token limits than this are refused as absurd rather than forwarded. */
  public static final int MAX_TOKENS_LIMIT = 1_000_000;

  private RequestParser() {}

  public static ObjectNode parse(Route route, String contentType, byte[] body) {
    return read(route, contentType, body, PromptPieces.off()).body();
  }

  /**
   * Parses and checks {@code body} as {@link #parse} does, taking the pieces a recent request sent
   * byte for byte from {@code memo} (see {@link BodyReader}); the tree is the same either way.
   */
  static BodyReader.Read read(Route route, String contentType, byte[] body, PromptPieces memo) {
    checkContentType(contentType);
    if (body.length == 0) {
      throw ErrorKind.INVALID_JSON.exception("The request body is empty; send a JSON object");
    }
    checkUtf8(body);
    BodyReader.Read read = memo.isOff() ? null : BodyReader.read(body, memo);
    if (read == null) {
      read = new BodyReader.Read(parseWhole(body), List.of());
    }
    checkFields(route, read.body());
    return read;
  }

  private static ObjectNode parseWhole(byte[] body) {
    JsonNode node;
    try {
      node = Json.parse(body);
    } catch (StreamConstraintsException e) {
      throw ErrorKind.INVALID_JSON.exception(
          "The request body exceeds a JSON limit of the gateway: " + e.getOriginalMessage());
    } catch (JsonProcessingException e) {
      throw ErrorKind.INVALID_JSON.exception("The request body is not valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw ErrorKind.INVALID_JSON.exception("The request body is not valid UTF-8 JSON");
    } catch (NumberFormatException e) {
      // Jackson refuses some well-formed numbers (an exponent of hundreds of digits) unchecked.
      throw ErrorKind.INVALID_JSON.exception("The request body holds a number the gateway cannot read");
    }
    if (node == null || !node.isObject()) {
      throw GatewayException.invalid("The request body must be a JSON object", null);
    }
    return (ObjectNode) node;
  }

  /**
   * JSON between systems is UTF-8 (RFC 8259). Jackson detects and accepts UTF-16 and UTF-32 too,
   * and the body is forwarded byte for byte, so the encoding is checked here, with the position of
   * the first bad byte in the message.
   */
  private static void checkUtf8(byte[] body) {
    int malformed = Utf8.firstMalformed(body);
    if (malformed >= 0) {
      throw ErrorKind.INVALID_JSON.exception("The request body is not valid UTF-8 (at byte " + malformed + ")");
    }
    boolean nul = false;
    for (int i = 0; i < Math.min(4, body.length); i++) {
      nul |= body[i] == 0;
    }
    if (nul) {
      throw ErrorKind.INVALID_JSON.exception("The request body must be UTF-8 JSON (it looks like UTF-16 or UTF-32)");
    }
  }

  private static void checkContentType(String contentType) {
    if (contentType == null) {
      return;
    }
    String[] parts = contentType.toLowerCase(Locale.ROOT).split(";");
    String type = parts[0].strip();
    boolean json = type.equals("application/json")
        || (type.startsWith("application/") && type.endsWith("+json"));
    String charset = null;
    for (int i = 1; i < parts.length; i++) {
      String parameter = parts[i].strip();
      if (parameter.startsWith("charset=")) {
        charset = parameter.substring("charset=".length()).replace("\"", "").strip();
      }
    }
    if (!json || (charset != null && !charset.equals("utf-8") && !charset.equals("utf8"))) {
      throw ErrorKind.UNSUPPORTED_MEDIA_TYPE.exception(
          "Content-Type must be application/json (UTF-8), not " + printable(contentType));
    }
  }

  /** A client value safe to quote in an error message: printable ASCII, at most 100 characters. */
  private static String printable(String value) {
    StringBuilder out = new StringBuilder(Math.min(value.length(), 100));
    for (int i = 0; i < value.length() && out.length() < 100; i++) {
      char c = value.charAt(i);
      out.append(c >= 0x20 && c < 0x7f ? c : '?');
    }
    return value.length() > 100 ? out + "…" : out.toString();
  }

  private static void checkFields(Route route, ObjectNode body) {
    JsonNode model = body.get("model");
    if (model == null || model.isNull()) {
      throw ErrorKind.MISSING_PARAMETER.exception("you must provide a model parameter", "model");
    }
    if (!model.isTextual() || model.textValue().isBlank() || model.textValue().length() > 256) {
      throw GatewayException.invalid("'model' must be a non-empty string of at most 256 characters", "model");
    }
    if (model.textValue().chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
      // Model names reach logs, metrics and the local backend's mapping: no control characters.
      throw GatewayException.invalid("'model' must not contain control characters", "model");
    }
    checkType(body, "stream", JsonNode::isBoolean, "a boolean");
    checkRange(body, "max_tokens", 1, MAX_TOKENS_LIMIT);
    checkRange(body, "max_completion_tokens", 1, MAX_TOKENS_LIMIT);
    checkRange(body, "max_output_tokens", 1, MAX_TOKENS_LIMIT);
    checkRange(body, "n", 1, 128);
    checkNumber(body, "temperature", 0, 2);
    checkNumber(body, "top_p", 0, 1);
    switch (route) {
      case CHAT_COMPLETIONS -> {
        JsonNode messages = body.get("messages");
        if (messages == null || messages.isNull()) {
          throw ErrorKind.MISSING_PARAMETER.exception("you must provide a messages parameter", "messages");
        }
        if (!messages.isArray()) {
          throw GatewayException.invalid("'messages' must be an array", "messages");
        }
        checkMessages(messages);
      }
      case COMPLETIONS -> {
        JsonNode prompt = body.get("prompt");
        if (prompt != null && !prompt.isNull() && !prompt.isTextual() && !prompt.isArray()) {
          throw GatewayException.invalid("'prompt' must be a string or an array", "prompt");
        }
      }
      case EMBEDDINGS -> {
        JsonNode input = body.get("input");
        if (input == null || input.isNull()) {
          throw ErrorKind.MISSING_PARAMETER.exception("you must provide an input parameter", "input");
        }
        if (!input.isTextual() && !input.isArray()) {
          throw GatewayException.invalid("'input' must be a string or an array", "input");
        }
      }
      case RESPONSES -> {
        JsonNode input = body.get("input");
        if (input != null && !input.isNull() && !input.isTextual() && !input.isArray()) {
          throw GatewayException.invalid("'input' must be a string or an array", "input");
        }
      }
      case MESSAGES, MESSAGES_COUNT_TOKENS -> AnthropicRequests.check(route, body);
      default -> {}
    }
  }

  /**
   * Each message must be an object with a string {@code role} and a string, array or null
   * {@code content}: the shape every stage that reads messages (token estimate, trimming, cache
   * key) relies on. Everything else inside a message passes through unchecked.
   */
  private static void checkMessages(JsonNode messages) {
    for (int i = 0; i < messages.size(); i++) {
      JsonNode message = messages.get(i);
      String at = "messages.[" + i + "]";
      if (!message.isObject()) {
        throw GatewayException.invalid("'" + at + "' must be an object", at);
      }
      JsonNode role = message.get("role");
      if (role == null || !role.isTextual()) {
        throw GatewayException.invalid("'" + at + ".role' must be a string", at + ".role");
      }
      JsonNode content = message.get("content");
      if (content != null && !content.isNull() && !content.isTextual() && !content.isArray()) {
        throw GatewayException.invalid("'" + at + ".content' must be a string, an array or null", at + ".content");
      }
    }
  }

  private interface Check {
    boolean ok(JsonNode node);
  }

  private static void checkType(ObjectNode body, String field, Check check, String what) {
    JsonNode value = body.get(field);
    if (value != null && !value.isNull() && !check.ok(value)) {
      throw GatewayException.invalid("'" + field + "' must be " + what, field);
    }
  }

  private static void checkRange(ObjectNode body, String field, long min, long max) {
    JsonNode value = body.get(field);
    if (value == null || value.isNull()) {
      return;
    }
    if (!value.isIntegralNumber()) {
      throw GatewayException.invalid("'" + field + "' must be an integer", field);
    }
    if (!value.canConvertToLong() || value.longValue() < min || value.longValue() > max) {
      throw GatewayException.invalid(
          "'" + field + "' must be between " + min + " and " + max + ", got " + value, field);
    }
  }

  private static void checkNumber(ObjectNode body, String field, double min, double max) {
    JsonNode value = body.get(field);
    if (value == null || value.isNull()) {
      return;
    }
    if (!value.isNumber()) {
      throw GatewayException.invalid("'" + field + "' must be a number", field);
    }
    double d = value.doubleValue();
    if (d < min || d > max) {
      throw GatewayException.invalid("'" + field + "' must be between " + min + " and " + max + ", got " + value, field);
    }
  }
}
