package io.spillway.config;

import java.time.Duration;

/**
 * The front end: where it listens and what it accepts.
 *
 * @param maxConnections open client connections beyond this are refused (closed at accept)
 * @param drainTimeout how long a graceful stop waits for in-flight requests
 * @param streamTimeLimit the longest a single streamed response may run, however steadily it flows
 * @param requestReadTimeout the longest a client may take to send one whole request (head and
 *     body), counted from its first byte; slower senders get 408 and are closed
 * @param reservedFileDescriptors file descriptors kept out of the connection budget for everything
 *     but client connections and their upstream sockets (log files, the usage store, Redis, idle
 *     pooled upstream connections); see {@code io.spillway.server.ConnectionBudget}
 * @param maxHops how many Spillway gateways a request may already have passed through (counted in
 *     its {@code Via} header) when it arrives; more is a loop and gets 508. The default, 1, lets one
 *     Spillway sit in front of another (a CI sidecar in front of the shared gateway)
 * @param http2 HTTP/2 on the same port as HTTP/1.1 (h2c with prior knowledge, h2 by ALPN over TLS)
 * @param maxPendingBodyBytes request-body bytes the gateway holds at once for requests whose body
 *     has not ended yet, across every connection and protocol; a request whose body would go past
 *     it gets 503 {@code too_many_pending_uploads} (the memory an unfinished upload pins is bounded)
 * @param pieceMemory heap for recent request pieces (items of a body's top-level arrays: messages,
 *     input items, tool definitions, 64 bytes or more) kept parsed with their memo keys, so a turn
 *     that repeats its prefix is not parsed or hashed again, as estimated per piece (about four times
 *     its bytes for a large piece, ten for a short one); 0 turns it off
 */
public record ServerConfig(
    String host,
    Integer port,
    DataSize maxRequestSize,
    DataSize maxHeaderSize,
    Duration idleTimeout,
    Integer maxConnections,
    Duration drainTimeout,
    Duration streamTimeLimit,
    TlsConfig tls,
    Duration requestReadTimeout,
    Integer reservedFileDescriptors,
    Integer maxHops,
    Http2Config http2,
    DataSize maxPendingBodyBytes,
    DataSize pieceMemory) {

  public static final ServerConfig DEFAULTS =
      new ServerConfig(null, null, null, null, null, null, null, null, null, null, null, null, null, null, null);

  /**
   * The default {@code maxConnections}: a ceiling that start-up lowers quietly to what the
   * file-descriptor limit holds. Any other value is the operator's, and lowering it is a warning.
   */
  public static final int DEFAULT_MAX_CONNECTIONS = 20_000;

  public ServerConfig {
    host = host != null ? host : "0.0.0.0";
    port = port != null ? port : 8080;
    maxRequestSize = maxRequestSize != null ? maxRequestSize : DataSize.ofMebibytes(8);
    maxHeaderSize = maxHeaderSize != null ? maxHeaderSize : DataSize.ofKibibytes(16);
    idleTimeout = idleTimeout != null ? idleTimeout : Duration.ofSeconds(60);
    maxConnections = maxConnections != null ? maxConnections : DEFAULT_MAX_CONNECTIONS;
    drainTimeout = drainTimeout != null ? drainTimeout : Duration.ofSeconds(30);
    streamTimeLimit = streamTimeLimit != null ? streamTimeLimit : Duration.ofMinutes(30);
    requestReadTimeout = requestReadTimeout != null ? requestReadTimeout : Duration.ofSeconds(30);
    reservedFileDescriptors = reservedFileDescriptors != null ? reservedFileDescriptors : 256;
    maxHops = maxHops != null ? maxHops : 1;
    http2 = http2 != null ? http2 : Http2Config.DEFAULTS;
    maxPendingBodyBytes = maxPendingBodyBytes != null ? maxPendingBodyBytes : DataSize.ofMebibytes(256);
    pieceMemory = pieceMemory != null ? pieceMemory : DataSize.ofMebibytes(64);
    ConfigProblems.Reporter at = ConfigProblems.at("server");
    if (port < 0 || port > 65535) {
      at.problem("port", port + " is not a port (0-65535)");
    }
    if (maxRequestSize.bytes() < 1024) {
      at.problem("maxRequestSize", "must be at least 1KiB");
    }
    if (maxHops < 0) {
      at.problem("maxHops", "must be 0 or more");
    }
    at.atLeast("maxConnections", maxConnections, 1);
    if (reservedFileDescriptors < 0) {
      at.problem("reservedFileDescriptors", "must not be negative");
    }
    at.positive("idleTimeout", idleTimeout, "must be longer than zero");
    at.positive("requestReadTimeout", requestReadTimeout, "must be longer than zero");
    at.positive("streamTimeLimit", streamTimeLimit, "must be longer than zero");
    if (maxPendingBodyBytes.bytes() < maxRequestSize.bytes()) {
      at.problem("maxPendingBodyBytes", "must be at least server.maxRequestSize (" + maxRequestSize + ")");
    }
    if (http2.maxPendingBodyBytesPerConnection().bytes() < maxRequestSize.bytes()) {
      at.problem("http2.maxPendingBodyBytesPerConnection",
          "must be at least server.maxRequestSize (" + maxRequestSize + ")");
    }
  }

  public ServerConfig withPort(int newPort) {
    return new ServerConfig(
        host, newPort, maxRequestSize, maxHeaderSize, idleTimeout, maxConnections, drainTimeout,
        streamTimeLimit, tls, requestReadTimeout, reservedFileDescriptors, maxHops, http2, maxPendingBodyBytes, pieceMemory);
  }

  public ServerConfig withHost(String newHost) {
    return new ServerConfig(
        newHost, port, maxRequestSize, maxHeaderSize, idleTimeout, maxConnections, drainTimeout,
        streamTimeLimit, tls, requestReadTimeout, reservedFileDescriptors, maxHops, http2, maxPendingBodyBytes, pieceMemory);
  }

  /** Optional TLS on the front end, from PEM files. */
  public record TlsConfig(String certFile, String keyFile) {
    public TlsConfig {
      if (certFile == null || keyFile == null) {
        ConfigProblems.at("server.tls").problem("", "needs both certFile and keyFile");
      }
    }
  }

  /**
   * HTTP/2 streams on one connection, and what one connection may take of the gateway.
   *
   * @param maxConcurrentStreams how many requests one HTTP/2 connection may have open at once
   *     (advertised as {@code SETTINGS_MAX_CONCURRENT_STREAMS}); more are refused by the protocol
   * @param maxInFlightPerConnection how many of one connection's requests are served at once; its
   *     other open streams wait, in order, for one of them to finish, so one connection cannot take
   *     the whole of the backends' concurrency from everyone else
   * @param maxPendingBodyBytesPerConnection request-body bytes one connection's unfinished uploads
   *     may hold at once; a stream that would go past it gets 503 {@code too_many_pending_uploads}
   * @param initialWindowSize each stream's flow-control window (advertised as
   *     {@code SETTINGS_INITIAL_WINDOW_SIZE}); the connection's window is twice as large
   * @param maxResetsPerWindow stream resets a connection may cause within {@code resetWindow},
   *     whoever sends them: the client's {@code RST_STREAM} and the server's own resets of streams
   *     the client made it give up (a flow-control window left at zero, a protocol error on a
   *     stream). Past it the connection is closed with {@code GOAWAY ENHANCE_YOUR_CALM}
   * @param resetWindow the window of {@code maxResetsPerWindow}
   */
  public record Http2Config(
      Integer maxConcurrentStreams,
      Integer maxInFlightPerConnection,
      DataSize maxPendingBodyBytesPerConnection,
      DataSize initialWindowSize,
      Integer maxResetsPerWindow,
      Duration resetWindow) {
    public static final Http2Config DEFAULTS = new Http2Config(null, null, null, null, null, null);

    public Http2Config {
      maxConcurrentStreams = maxConcurrentStreams != null ? maxConcurrentStreams : 100;
      maxInFlightPerConnection = maxInFlightPerConnection != null ? maxInFlightPerConnection : 32;
      maxPendingBodyBytesPerConnection = maxPendingBodyBytesPerConnection != null
          ? maxPendingBodyBytesPerConnection : DataSize.ofMebibytes(32);
      initialWindowSize = initialWindowSize != null ? initialWindowSize : DataSize.ofKibibytes(64);
      maxResetsPerWindow = maxResetsPerWindow != null ? maxResetsPerWindow : 200;
      resetWindow = resetWindow != null ? resetWindow : Duration.ofSeconds(30);
      ConfigProblems.Reporter at = ConfigProblems.at("server.http2");
      at.atLeast("maxConcurrentStreams", maxConcurrentStreams, 1);
      at.atLeast("maxInFlightPerConnection", maxInFlightPerConnection, 1);
      if (initialWindowSize.bytes() < 1024 || initialWindowSize.bytes() > Integer.MAX_VALUE) {
        at.problem("initialWindowSize", "must be between 1KiB and 2147483647 bytes (HTTP/2's largest window)");
      }
      at.atLeast("maxResetsPerWindow", maxResetsPerWindow, 1);
      if (resetWindow.toSeconds() < 1) {
        at.problem("resetWindow", "must be at least 1s");
      }
    }
  }
}
