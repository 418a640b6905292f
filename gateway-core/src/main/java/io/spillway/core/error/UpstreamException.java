package io.spillway.core.error;

/**
 * A transport-level failure talking to a backend: the upstream never gave a usable HTTP answer.
 * {@link #unprocessed()} is true when the request certainly never reached the upstream (connection
 * refused, DNS), so retrying it elsewhere cannot run it twice.
 */
public final class UpstreamException extends GatewayException {
  public enum Failure {
    CONNECT_FAILED(ErrorKind.BAD_GATEWAY, true),
    RESET_BEFORE_RESPONSE(ErrorKind.BAD_GATEWAY, false),
    TIMEOUT(ErrorKind.GATEWAY_TIMEOUT, false),
    INVALID_RESPONSE(ErrorKind.UPSTREAM_INVALID, false),
    RESET_MID_STREAM(ErrorKind.BAD_GATEWAY, false),
    RESPONSE_TOO_LARGE(ErrorKind.UPSTREAM_INVALID, false),
    /** The upstream refused Spillway's own credentials (HTTP 401): nothing ran there. */
    CREDENTIALS_REJECTED(ErrorKind.UPSTREAM_AUTH, true);

    private final ErrorKind kind;
    private final boolean unprocessed;

    Failure(ErrorKind kind, boolean unprocessed) {
      this.kind = kind;
      this.unprocessed = unprocessed;
    }

    public ErrorKind kind() {
      return kind;
    }
  }

  private final Failure failure;
  private final String backend;

  public UpstreamException(String backend, Failure failure, String message, Throwable cause) {
    super(failure.kind, message, null, failure.kind.code(), null, cause);
    this.failure = failure;
    this.backend = backend;
  }

  public Failure failure() {
    return failure;
  }

  public String backend() {
    return backend;
  }

  public boolean unprocessed() {
    return failure.unprocessed;
  }
}
