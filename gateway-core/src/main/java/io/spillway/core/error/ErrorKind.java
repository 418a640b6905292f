package io.spillway.core.error;

/**
 * Every way a request can fail, each mapped once to an HTTP status, an OpenAI error {@code type}
 * and a default {@code code}. The one table that decides what a client sees.
 */
public enum ErrorKind {
  INVALID_REQUEST(400, "invalid_request_error", null),
  INVALID_JSON(400, "invalid_request_error", "invalid_json"),
  MISSING_PARAMETER(400, "invalid_request_error", "missing_required_parameter"),
  INVALID_API_KEY(401, "invalid_request_error", "invalid_api_key"),
  FORBIDDEN(403, "invalid_request_error", "forbidden"),
  MODEL_NOT_ALLOWED(403, "invalid_request_error", "model_not_allowed"),
  NOT_FOUND(404, "invalid_request_error", "unknown_url"),
  MODEL_NOT_FOUND(404, "invalid_request_error", "model_not_found"),
  METHOD_NOT_ALLOWED(405, "invalid_request_error", "method_not_allowed"),
  REQUEST_TIMEOUT(408, "invalid_request_error", "request_timeout"),
  REQUEST_TOO_LARGE(413, "invalid_request_error", "request_too_large"),
  UNSUPPORTED_MEDIA_TYPE(415, "invalid_request_error", "unsupported_media_type"),
  EXPECTATION_FAILED(417, "invalid_request_error", "expectation_failed"),
  HEADERS_TOO_LARGE(431, "invalid_request_error", "request_header_fields_too_large"),
  /** The client went away before its answer was complete; never sent, only logged (nginx's 499). */
  CLIENT_CLOSED(499, "invalid_request_error", "client_closed"),
  RATE_LIMITED(429, "requests", "rate_limit_exceeded"),
  QUOTA_EXCEEDED(429, "insufficient_quota", "insufficient_quota"),
  QUEUE_TIMEOUT(429, "requests", "queue_timeout"),
  INTERNAL(500, "server_error", "internal_error"),
  BAD_GATEWAY(502, "server_error", "upstream_unreachable"),
  UPSTREAM_INVALID(502, "server_error", "upstream_invalid_response"),
  UPSTREAM_AUTH(502, "server_error", "upstream_auth_failed"),
  CAPACITY(503, "server_error", "model_at_capacity"),
  UNAVAILABLE(503, "server_error", "service_unavailable"),
  GATEWAY_TIMEOUT(504, "server_error", "upstream_timeout"),
  HTTP_VERSION_NOT_SUPPORTED(505, "invalid_request_error", "http_version_not_supported"),
  LOOP_DETECTED(508, "server_error", "loop_detected");

  private final int status;
  private final String type;
  private final String code;

  ErrorKind(int status, String type, String code) {
    this.status = status;
    this.type = type;
    this.code = code;
  }

  public int status() {
    return status;
  }

  public String type() {
    return type;
  }

  public String code() {
    return code;
  }

  /**
   * The error {@code type} of Anthropic's Messages API for this kind, from its status: what a
   * Claude Code client reads in {@code {"type":"error","error":{"type":…}}}. A capacity or
   * unavailability answer (503) is {@code overloaded_error}, which Anthropic's clients retry.
   */
  public String anthropicType() {
    return anthropicType(status);
  }

  /** Anthropic's error {@code type} for an HTTP error {@code status}. */
  public static String anthropicType(int status) {
    return switch (status) {
      case 400, 405, 408, 415, 417, 431, 505 -> "invalid_request_error";
      case 401 -> "authentication_error";
      case 402 -> "billing_error";
      case 403 -> "permission_error";
      case 404 -> "not_found_error";
      case 413 -> "request_too_large";
      case 429 -> "rate_limit_error";
      case 503, 529 -> "overloaded_error";
      case 504 -> "timeout_error";
      default -> status >= 500 ? "api_error" : "invalid_request_error";
    };
  }

  /** The kind whose default {@code code} is {@code code} and whose status is {@code status}, or null. */
  public static ErrorKind byCode(String code, int status) {
    if (code == null) {
      return null;
    }
    for (ErrorKind kind : values()) {
      if (code.equals(kind.code) && kind.status == status) {
        return kind;
      }
    }
    return null;
  }

  /** A failure of this kind with its default {@code code}, no {@code param} and no {@code Retry-After}. */
  public GatewayException exception(String message) {
    return new GatewayException(this, message, null, code, null, null);
  }

  /** A failure of this kind about the request field {@code param} (may be null). */
  public GatewayException exception(String message, String param) {
    return new GatewayException(this, message, param, code, null, null);
  }
}
