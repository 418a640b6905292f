package io.spillway.core.sse;

/**
 * Why the front end closes a stream before its end, for the stages that record it (the access log
 * says {@code client_closed} or {@code stream_time_limit}). Known on the closing thread for the
 * duration of the {@link EventStream#close} call, through every wrapper, so no stream type needs
 * to carry it.
 */
public enum CloseCause {
  /** The client went away. */
  CLIENT_CLOSED("client_closed"),
  /** The gateway cut the stream at {@code server.streamTimeLimit}. */
  STREAM_TIME_LIMIT("stream_time_limit");

  private static final ThreadLocal<CloseCause> CLOSING = new ThreadLocal<>();

  private final String code;

  CloseCause(String code) {
    this.code = code;
  }

  /** The name the access log and metrics use. */
  public String code() {
    return code;
  }

  /** Closes {@code stream} for {@code cause}. */
  public static void close(EventStream stream, CloseCause cause) {
    CLOSING.set(cause);
    try {
      stream.close();
    } finally {
      CLOSING.remove();
    }
  }

  /** Why the stream being closed on this thread is closed; a close without a known cause is the client's. */
  public static CloseCause current() {
    CloseCause cause = CLOSING.get();
    return cause != null ? cause : CLIENT_CLOSED;
  }
}
