package io.spillway.core.error;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A failure that reaches the client as an OpenAI error body. Thrown anywhere in the pipeline;
 * {@code io.spillway.core.pipeline.ErrorMapper} turns it into the answer. Carries no stack trace:
 * these are expected outcomes on the hot path, not bugs.
 *
 * <p>Made by its kind: {@code ErrorKind.MODEL_NOT_FOUND.exception(message)}, then
 * {@link #withCode}, {@link #withRetryAfter} or {@link #withHeader} (a rate limit's
 * {@code x-ratelimit-*}) where the defaults do not fit.
 */
public class GatewayException extends RuntimeException {
  private final ErrorKind kind;
  private final String param;
  private final String code;
  private final Duration retryAfter;
  private final Map<String, String> headers;

  public GatewayException(
      ErrorKind kind, String message, String param, String code, Duration retryAfter, Throwable cause) {
    this(kind, message, param, code, retryAfter, cause, Map.of());
  }

  private GatewayException(ErrorKind kind, String message, String param, String code, Duration retryAfter,
      Throwable cause, Map<String, String> headers) {
    super(message, cause, false, false);
    this.kind = kind;
    this.param = param;
    this.code = code;
    this.retryAfter = retryAfter;
    this.headers = headers;
  }

  /** A 400 {@code invalid_request_error} about the request field {@code param} (may be null). */
  public static GatewayException invalid(String message, String param) {
    return ErrorKind.INVALID_REQUEST.exception(message, param);
  }

  /** This failure with another {@code code}, as a plain {@code GatewayException}. */
  public GatewayException withCode(String newCode) {
    return new GatewayException(kind, getMessage(), param, newCode, retryAfter, getCause(), headers);
  }

  /** This failure telling the client to retry after {@code wait}, as a plain {@code GatewayException}. */
  public GatewayException withRetryAfter(Duration wait) {
    return new GatewayException(kind, getMessage(), param, code, wait, getCause(), headers);
  }

  /** This failure with one more response header for its answer, as a plain {@code GatewayException}. */
  public GatewayException withHeader(String name, String value) {
    Map<String, String> more = new LinkedHashMap<>(headers);
    more.put(name, value);
    return new GatewayException(kind, getMessage(), param, code, retryAfter, getCause(),
        Collections.unmodifiableMap(more));
  }

  /** Response headers the answer carries besides the error body and {@code Retry-After}, in order. */
  public Map<String, String> headers() {
    return headers;
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

  /**
   * How long the client should wait before retrying, or null when this failure does not say (a 429
   * or 503 then asks for {@code ErrorMapper.DEFAULT_RETRY_AFTER}; other kinds send no wait).
   */
  public Duration retryAfter() {
    return retryAfter;
  }

  public OpenAiError toError() {
    return new OpenAiError(getMessage(), kind.type(), param, code);
  }
}
