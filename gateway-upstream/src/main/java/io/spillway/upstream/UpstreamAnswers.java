package io.spillway.upstream;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.spillway.core.error.OpenAiError;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import java.io.IOException;

/**
 * Checks a buffered upstream answer before any client sees it: a success must be one JSON object,
 * and an error must be an OpenAI error body (others are rewrapped, keeping the status). The
 * gateway's own key, should an answer echo it, is redacted at the edge ({@code RedactingService}).
 */
final class UpstreamAnswers {
  /** Error bodies larger than this are not worth parsing for a message. */
  private static final int MAX_ERROR_PARSE = 64 * 1024;
  private static final int MAX_MESSAGE = 1_000;

  /** Syntax only: answers may legitimately hold long strings and deep tool schemas. */
  private static final JsonFactory CHECKER =
      JsonFactory.builder()
          .recyclerPool(Json.RECYCLER)
          .streamReadConstraints(
              StreamReadConstraints.builder()
                  .maxNestingDepth(1_000)
                  .maxStringLength(Integer.MAX_VALUE)
                  .maxNumberLength(10_000)
                  .build())
          .build();

  /** Reads a success body into the tree its consumers share, with the checker's limits. */
  private static final ObjectMapper CHECKED_READER =
      JsonMapper.builder(CHECKER).enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS).build();

  private UpstreamAnswers() {}

  static GatewayResponse checked(String backend, int status, Headers headers, byte[] body) {
    if (status >= 200 && status < 300) {
      JsonNode answer = oneJsonObject(body);
      if (answer == null) {
        throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
            "The " + backend + " backend answered HTTP " + status + " with a body that is not a JSON object",
            null);
      }
      return GatewayResponse.buffered(status, headers, body, answer); // read once, for everyone after
    }
    if (status < 400) {
      throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
          "The " + backend + " backend answered HTTP " + status + ", which the gateway does not follow", null);
    }
    JsonNode parsed = body.length <= MAX_ERROR_PARSE ? parse(body) : null;
    if (parsed != null && parsed.path("error").isObject()) {
      return GatewayResponse.buffered(status, headers, body);
    }
    String message = messageOf(parsed);
    if (message == null) {
      message = "The " + backend + " backend answered HTTP " + status + " without an OpenAI error body";
    }
    if (message.length() > MAX_MESSAGE) {
      message = message.substring(0, MAX_MESSAGE) + "…";
    }
    byte[] wrapped = ErrorMapper.body(
        new OpenAiError(message, status >= 500 ? "server_error" : "invalid_request_error", null, "upstream_error"));
    return GatewayResponse.buffered(
        status, headers.with("content-type", GatewayResponse.JSON), wrapped);
  }

  /** The body when it is exactly one JSON object and nothing after it, read as a tree; else null. */
  static JsonNode oneJsonObject(byte[] body) {
    try {
      JsonNode tree = CHECKED_READER.readTree(body);
      return tree != null && tree.isObject() ? tree : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  private static JsonNode parse(byte[] body) {
    try {
      return Json.parse(body);
    } catch (IOException e) {
      return null;
    }
  }

  /** The message of the non-OpenAI error shapes local servers use ({@code message}, or {@code error} as text). */
  private static String messageOf(JsonNode parsed) {
    if (parsed == null || !parsed.isObject()) {
      return null;
    }
    JsonNode message = parsed.get("message");
    if (message != null && message.isTextual() && !message.textValue().isBlank()) {
      return message.textValue();
    }
    JsonNode error = parsed.get("error");
    if (error != null && error.isTextual() && !error.textValue().isBlank()) {
      return error.textValue();
    }
    return null;
  }
}
