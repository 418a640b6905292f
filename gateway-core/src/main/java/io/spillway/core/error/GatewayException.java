package io.spillway.core.error;

import java.time.Duration;

/**
 * A failure that reaches the client as an OpenAI error body. Thrown anywhere in the pipeline; the
 * front end renders it in one place. Carries no stack trace: these are expected outcomes on the hot
 * path, not bugs.
 */
public class GatewayException extends RuntimeException {
  private final ErrorKind kind;
  private final String param;
  private final String code;
  private final Duration retryAfter;

  public GatewayException(ErrorKind kind, String message) {
    this(kind, message, null, kind.code(), null, null);
  }

  public GatewayException(
      ErrorKind kind, String message, String param, String code, Duration retryAfter, Throwable cause) {
    super(message, cause, false, false);
    this.kind = kind;
    this.param = param;
    this.code = code;
    this.retryAfter = retryAfter;
  }

  public static GatewayException invalid(String message, String param) {
    return new GatewayException(ErrorKind.INVALID_REQUEST, message, param, null, null, null);
  }

  public static GatewayException of(ErrorKind kind, String message, Duration retryAfter) {
    return new GatewayException(kind, message, null, kind.code(), retryAfter, null);
  }

  public ErrorKind kind() {
    return kind;
  }

  public int status() {
    return kind.status();
  }

  public String param() {
    return param;
  }

  public String code() {
    return code;
  }

  /** How long the client should wait before retrying, or null when retrying will not help. */
  public Duration retryAfter() {
    return retryAfter;
  }

  public OpenAiError toError() {
    return new OpenAiError(getMessage(), kind.type(), param, code);
  }
}
