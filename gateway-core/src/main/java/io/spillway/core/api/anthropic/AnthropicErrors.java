package io.spillway.core.api.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.ErrorDialect;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;

/**
 * An error answer made inside the pipeline (by a stage through {@code ErrorMapper}, or passed on from
 * an OpenAI-kind backend) told in Anthropic's dialect at the edge of the Messages API. The status
 * and headers stay; the body becomes {@code {"type":"error","error":{"type","message"}}}, its type
 * that of the {@link ErrorKind} the OpenAI body's {@code code} names (else of the status), so both
 * dialects come from the one table. A body already in Anthropic's shape (an Anthropic cloud route's
 * own error) passes as it is.
 */
public final class AnthropicErrors {
  private AnthropicErrors() {}

  /** {@code answer} (an error answer, buffered) with its body in Anthropic's shape. */
  public static GatewayResponse inAnthropicDialect(GatewayResponse answer) {
    JsonNode body = answer.json();
    if (body != null && "error".equals(Json.text(body, "type")) && body.path("error").isObject()) {
      return answer;
    }
    JsonNode error = body == null ? null : body.get("error");
    String message = error != null && error.isObject() ? Json.text(error, "message")
        : error != null && error.isTextual() ? error.textValue() : null;
    if (message == null) {
      message = "The request failed with HTTP " + answer.status();
    }
    String code = error != null && error.isObject() ? Json.text(error, "code") : null;
    ErrorKind kind = ErrorKind.byCode(code, answer.status());
    String type = kind != null ? kind.anthropicType() : ErrorKind.anthropicType(answer.status());
    return answer.withBody(Json.toBytes(ErrorDialect.anthropic(type, message)))
        .withHeader("content-type", GatewayResponse.JSON);
  }
}
