package io.spillway.core.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import java.io.IOException;

/**
 * Parses and checks an OpenAI request body once, before any stage sees it. Only what Spillway itself
 * relies on is checked; every other field passes through untouched for the upstream to judge.
 */
public final class RequestParser {
  /** Larger token limits than this are refused as absurd rather than forwarded. */
  public static final int MAX_TOKENS_LIMIT = 1_000_000;

  private RequestParser() {}

  public static ObjectNode parse(Route route, String contentType, byte[] body) {
    checkContentType(contentType);
    if (body.length == 0) {
      throw new GatewayException(ErrorKind.INVALID_JSON,
          "The request body is empty; send a JSON object", null, ErrorKind.INVALID_JSON.code(), null, null);
    }
    JsonNode node;
    try {
      node = Json.parse(body);
    } catch (StreamConstraintsException e) {
      throw new GatewayException(ErrorKind.INVALID_JSON,
          "The request body nests JSON deeper than " + Json.MAX_DEPTH + " levels", null,
          ErrorKind.INVALID_JSON.code(), null, null);
    } catch (JsonProcessingException e) {
      throw new GatewayException(ErrorKind.INVALID_JSON,
          "The request body is not valid JSON: " + e.getOriginalMessage(), null, ErrorKind.INVALID_JSON.code(),
          null, null);
    } catch (IOException e) {
      throw new GatewayException(ErrorKind.INVALID_JSON,
          "The request body is not valid UTF-8 JSON", null, ErrorKind.INVALID_JSON.code(), null, null);
    }
    if (node == null || !node.isObject()) {
      throw GatewayException.invalid("The request body must be a JSON object", null);
    }
    ObjectNode object = (ObjectNode) node;
    checkFields(route, object);
    return object;
  }

  private static void checkContentType(String contentType) {
    if (contentType == null) {
      return;
    }
    String type = contentType.toLowerCase(java.util.Locale.ROOT);
    if (!type.startsWith("application/json") && !type.contains("+json")) {
      throw new GatewayException(ErrorKind.UNSUPPORTED_MEDIA_TYPE,
          "Content-Type must be application/json, not " + contentType, null,
          ErrorKind.UNSUPPORTED_MEDIA_TYPE.code(), null, null);
    }
  }

  private static void checkFields(Route route, ObjectNode body) {
    JsonNode model = body.get("model");
    if (model == null || model.isNull()) {
      throw new GatewayException(ErrorKind.MISSING_PARAMETER,
          "you must provide a model parameter", "model", ErrorKind.MISSING_PARAMETER.code(), null, null);
    }
    if (!model.isTextual() || model.textValue().isBlank() || model.textValue().length() > 256) {
      throw GatewayException.invalid("'model' must be a non-empty string of at most 256 characters", "model");
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
          throw new GatewayException(ErrorKind.MISSING_PARAMETER, "you must provide a messages parameter",
              "messages", ErrorKind.MISSING_PARAMETER.code(), null, null);
        }
        if (!messages.isArray()) {
          throw GatewayException.invalid("'messages' must be an array", "messages");
        }
      }
      case COMPLETIONS -> {
        JsonNode prompt = body.get("prompt");
        if (prompt != null && !prompt.isNull() && !prompt.isTextual() && !prompt.isArray()) {
          throw GatewayException.invalid("'prompt' must be a string or an array", "prompt");
        }
      }
      case RESPONSES -> {
        JsonNode input = body.get("input");
        if (input != null && !input.isNull() && !input.isTextual() && !input.isArray()) {
          throw GatewayException.invalid("'input' must be a string or an array", "input");
        }
      }
      default -> {}
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
