package io.spillway.core.error;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;

/**
 * How an error body is written for the API a client speaks: the same failure ({@link ErrorKind},
 * message, status) in OpenAI's shape {@code {"error":{"message","type","param","code"}}} or in
 * Anthropic's {@code {"type":"error","error":{"type","message"}}}. The status and the headers are the
 * same in both ({@code io.spillway.core.pipeline.ErrorMapper} decides them once).
 */
public enum ErrorDialect {
  OPENAI {
    @Override
    public ObjectNode body(GatewayException e) {
      return e.toError().toJson();
    }
  },
  ANTHROPIC {
    @Override
    public ObjectNode body(GatewayException e) {
      return anthropic(e.kind().anthropicType(), e.getMessage());
    }
  };

  /** The error body for {@code e}. */
  public abstract ObjectNode body(GatewayException e);

  /** Anthropic's error body: {@code {"type":"error","error":{"type":type,"message":message}}}. */
  public static ObjectNode anthropic(String type, String message) {
    ObjectNode root = Json.object();
    root.put("type", "error");
    root.putObject("error").put("type", type).put("message", message);
    return root;
  }
}
