package io.spillway.server;

/**
 * The front end could not listen because another process holds its address. Carries what the
 * command line needs to say so in one line; no stack trace, since nothing here is a bug.
 */
public final class PortInUseException extends RuntimeException {
  private final String host;
  private final int port;

  public PortInUseException(String host, int port, Throwable cause) {
    super("port " + port + " on " + host + " is already in use", cause, false, false);
    this.host = host;
    this.port = port;
  }

  public String host() {
    return host;
  }

  public int port() {
    return port;
  }
}
