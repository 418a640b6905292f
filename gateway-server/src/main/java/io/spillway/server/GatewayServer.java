package io.spillway.server;

import io.spillway.core.http.HttpService;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.util.concurrent.GlobalEventExecutor;
import io.spillway.config.ConfigException;
import io.spillway.config.ServerConfig;
import java.io.File;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Netty front end: HTTP/1.1 and HTTP/2 on one port (h2c with prior knowledge, or h2 by ALPN
 * over TLS). Event loops decode, enforce limits and write; the {@link HttpService} answers each
 * request from the event loop that received it, and moves to a virtual thread only for work that
 * may block.
 *
 * <p>Lifecycle: {@link #start} binds; {@link #stop} stops accepting, lets in-flight requests finish
 * up to the drain timeout, then closes every connection.
 */
public final class GatewayServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(GatewayServer.class);
  private static final int WRITE_LOW_WATER_MARK = 32 * 1024;
  private static final int WRITE_HIGH_WATER_MARK = 128 * 1024;

  private final ServerConfig config;
  private volatile GatewayChannelInitializer initializer;
  private final HttpService service;
  private final Clock clock;
  private final ConnectionTracker connections;
  private final ChannelGroup channels = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final EventLoops sharedLoops;
  private EventLoops loops;
  private Channel serverChannel;

  private final ConnectionBudget budget;

  public GatewayServer(ServerConfig config, HttpService service, Clock clock) {
    this(config, service, clock, ConnectionBudget.of(config));
  }

  /** A server that accepts at most {@code budget.effective()} connections at once. */
  public GatewayServer(ServerConfig config, HttpService service, Clock clock, ConnectionBudget budget) {
    this(config, service, clock, budget, null);
  }

  /**
   * A server on {@code loops}, which the caller owns and shares with its upstream client (null: the
   * server makes and stops its own).
   */
  public GatewayServer(
      ServerConfig config, HttpService service, Clock clock, ConnectionBudget budget, EventLoops loops) {
    this.sharedLoops = loops;
    this.config = config;
    this.service = service;
    this.clock = clock;
    this.budget = budget;
    this.connections = new ConnectionTracker(budget.effective());
  }

  /** The connection limit in force, and why it may be below {@code server.maxConnections}. */
  public ConnectionBudget budget() {
    return budget;
  }

  /**
   * Loads the native epoll transport now if it is available, and what the first request's decoding
   * and encoding need (a start-up warm-up on a thread of its own; idempotent; see {@link FrontEndWarmUp}).
   */
  public static void warmTransport() {
    FrontEndWarmUp.run();
  }

  public GatewayServer start() {
    if (budget.lowered() && budget.configured() != ServerConfig.DEFAULT_MAX_CONNECTIONS) {
      log.warn(budget.warning());
    } else if (budget.lowered()) {
      // The default is a ceiling fitted to the machine, not a promise an operator made: no warning.
      log.debug(budget.warning());
    }
    loops = sharedLoops != null ? sharedLoops : new EventLoops();
    boolean epoll = loops.epoll();
    SslContext ssl = sslContext();
    ServerBootstrap bootstrap =
        new ServerBootstrap()
            .group(loops.acceptor(), loops.workers())
            .channel(loops.serverChannelType())
            .option(ChannelOption.SO_BACKLOG, 4096)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childOption(ChannelOption.SO_KEEPALIVE, true)
            .childOption(
                ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(WRITE_LOW_WATER_MARK, WRITE_HIGH_WATER_MARK))
            .childHandler(initializer = new GatewayChannelInitializer(
                config, ssl, connections, channels, service, clock));
    try {
      serverChannel =
          bootstrap.bind(new InetSocketAddress(config.host(), config.port())).syncUninterruptibly().channel();
    } catch (Exception e) { // Netty rethrows the bind's IOException unchecked
      stopOwnLoops();
      if (addressInUse(e)) {
        throw new PortInUseException(config.host(), config.port(), e);
      }
      throw e;
    }
    log.info("listening on {}:{} ({}{})", config.host(), port(), epoll ? "epoll" : "nio",
        ssl != null ? ", TLS" : "");
    return this;
  }

  /** Whether a bind failed because the address is taken (NIO's BindException, epoll's EADDRINUSE). */
  private static boolean addressInUse(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.net.BindException
          || t.getMessage() != null && t.getMessage().contains("Address already in use")) {
        return true;
      }
    }
    return false;
  }

  private SslContext sslContext() {
    ServerConfig.TlsConfig tls = config.tls();
    if (tls == null) {
      return null;
    }
    try {
      return SslContextBuilder.forServer(new File(tls.certFile()), new File(tls.keyFile()))
          .applicationProtocolConfig(Alpn.H2_THEN_HTTP_1_1)
          .build();
    } catch (Exception e) {
      throw new ConfigException("server.tls: cannot load certFile/keyFile: " + e.getMessage(), e);
    }
  }

  /** The bound port (useful when configured as 0). */
  public int port() {
    return ((InetSocketAddress) serverChannel.localAddress()).getPort();
  }

  public int openConnections() {
    return connections.open();
  }

  public int inFlightRequests() {
    return connections.inFlight();
  }

  /**
   * Request-body bytes held for requests whose body has not ended yet, over all connections
   * (bounded by {@code server.maxPendingBodyBytes}); 0 before the server starts.
   */
  public long pendingBodyBytes() {
    GatewayChannelInitializer started = initializer;
    return started == null ? 0 : started.pendingBodyBytes();
  }

  /**
   * Bytes written to clients but not yet taken by their sockets, over all connections. Each
   * connection stops producing at the high water mark, so this stays bounded however slowly
   * clients read.
   */
  public long pendingWriteBytes() {
    long total = 0;
    for (Channel channel : channels) {
      var buffer = channel.unsafe().outboundBuffer();
      if (buffer != null) {
        total += buffer.totalPendingWriteBytes();
      }
    }
    return total;
  }

  /** The outbound buffer size at which a connection stops taking more until its client reads. */
  public static int writeHighWaterMark() {
    return WRITE_HIGH_WATER_MARK;
  }

  public boolean stopping() {
    return connections.draining();
  }

  /** Stops accepting, waits up to {@code drainTimeout} for in-flight requests, then closes all. */
  public void stop(Duration drainTimeout) {
    if (serverChannel == null) {
      return;
    }
    connections.startDraining();
    serverChannel.close().syncUninterruptibly();
    boolean drained = connections.awaitIdle(drainTimeout);
    if (!drained) {
      log.warn("drain timeout of {} passed with {} requests in flight; closing them", drainTimeout,
          connections.inFlight());
    }
    channels.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
    stopOwnLoops();
    serverChannel = null;
  }

  private void stopOwnLoops() {
    if (sharedLoops == null && loops != null) {
      loops.close();
    }
  }

  @Override
  public void close() {
    stop(config.drainTimeout());
  }
}
