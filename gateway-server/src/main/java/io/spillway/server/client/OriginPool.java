package io.spillway.server.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http2.DefaultHttp2WindowUpdateFrame;
import io.netty.handler.codec.http2.Http2CodecUtil;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import io.netty.handler.ssl.SslHandler;
import io.spillway.core.time.Ticker;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The connections of one event loop to one origin: idle HTTP/1.1 connections (most recently used
 * first), and HTTP/2 connections shared by many exchanges. Whether a TLS origin speaks HTTP/2 is
 * learned from its first connection's ALPN; exchanges that arrive while that first connection is
 * being made wait for it rather than each opening their own. Touched only on its loop.
 */
final class OriginPool {
  private static final int MAX_HEADER_BYTES = 64 * 1024;
  /** The HTTP/2 connection's receive window: as large as the protocol allows. */
  private static final int CONNECTION_WINDOW = Integer.MAX_VALUE;
  /** A connection idle this long (or half the idle timeout, if shorter) is checked before reuse. */
  private static final Duration STALE_CHECK_AFTER = Duration.ofSeconds(1);

  private final Origin origin;
  private final EventLoop loop;
  private final Class<? extends SocketChannel> channelType;
  private final ClientTls tls;
  private final ClientSettings settings;
  private final Ticker ticker;
  /** Idle at least this long (ticker nanoseconds), a connection is checked for a close before reuse. */
  private final long staleCheckAfter;
  private final ArrayDeque<H1Connection> idle = new ArrayDeque<>();
  private final List<H2Connection> shared = new ArrayList<>(1);
  /** True or false once known; null while a TLS origin's protocol is unknown. */
  private Boolean http2;
  private boolean negotiating;
  private final List<NettyExchange> waiting = new ArrayList<>();

  OriginPool(Origin origin, EventLoop loop, Class<? extends SocketChannel> channelType, ClientTls tls,
      ClientSettings settings, Ticker ticker) {
    this.origin = origin;
    this.loop = loop;
    this.channelType = channelType;
    this.tls = tls;
    this.settings = settings;
    this.ticker = ticker;
    this.http2 = origin.tls() ? null : origin.h2c();
    this.staleCheckAfter = Math.min(STALE_CHECK_AFTER.toNanos(), settings.idleTimeout().toNanos() / 2);
  }

  Origin origin() {
    return origin;
  }

  /**
   * Finds {@code exchange} a connection: a shared HTTP/2 one with room, an idle HTTP/1.1 one
   * (unless {@code fresh}: a retry after a pooled connection turned out dead), or a new one.
   */
  void acquire(NettyExchange exchange, boolean fresh) {
    if (Boolean.TRUE.equals(http2)) {
      for (H2Connection connection : shared) {
        if (connection.hasRoom() && connection.parent() != exchange.avoid()) {
          connection.open(exchange, !fresh);
          return;
        }
      }
    } else if (Boolean.FALSE.equals(http2) && !fresh) {
      H1Connection connection;
      while ((connection = idle.pollFirst()) != null) {
        if (!connection.channel().isActive()) {
          continue;
        }
        if (ticker.read() - connection.idleSince() >= staleCheckAfter) {
          // Idle long enough that the upstream may have closed it just now: the loop first reads
          // what has arrived (a close), then the request goes out, on it or on another.
          H1Connection waited = connection;
          loop.schedule(() -> reuseChecked(waited, exchange), 0, TimeUnit.NANOSECONDS);
          return;
        }
        connection.start(exchange, true);
        return;
      }
    }
    if (negotiating && !Boolean.FALSE.equals(http2)) {
      waiting.add(exchange);
      return;
    }
    connect(exchange);
  }

  /**
   * After a pass of the loop's I/O (a task scheduled from a task runs after it): the idle connection
   * taken for {@code exchange}, if still open, carries it; else the exchange looks again.
   */
  private void reuseChecked(H1Connection connection, NettyExchange exchange) {
    if (exchange.ended()) {
      release(connection);
    } else if (connection.channel().isActive()) {
      connection.start(exchange, true);
    } else {
      acquire(exchange, false);
    }
  }

  /** An HTTP/1.1 connection whose exchange ended cleanly: kept for the next, or closed when there are enough. */
  void release(H1Connection connection) {
    if (!connection.channel().isActive() || idle.size() >= settings.maxIdlePerOrigin()) {
      connection.channel().close();
      return;
    }
    connection.idleSince(ticker.read());
    idle.addFirst(connection);
  }

  void closeIdle(long now) {
    long limit = settings.idleTimeout().toNanos();
    for (Iterator<H1Connection> it = idle.descendingIterator(); it.hasNext(); ) {
      H1Connection connection = it.next();
      if (now - connection.idleSince() >= limit || !connection.channel().isActive()) {
        it.remove();
        connection.channel().close();
      }
    }
    for (Iterator<H2Connection> it = shared.iterator(); it.hasNext(); ) {
      H2Connection connection = it.next();
      if (!connection.usable() || connection.idleFor(now) >= limit) {
        it.remove();
        connection.closeWhenIdle();
      }
    }
  }

  void removed(H2Connection connection) {
    shared.remove(connection);
  }

  private void connect(NettyExchange exchange) {
    boolean learning = http2 == null;
    if (learning || Boolean.TRUE.equals(http2)) {
      negotiating = true;
    }
    Bootstrap bootstrap = new Bootstrap()
        .group(loop)
        .channel(channelType)
        .option(ChannelOption.TCP_NODELAY, true)
        .option(ChannelOption.SO_KEEPALIVE, true)
        .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE,
            exchange.request().connectTimeout().toMillis()))
        .handler(new ChannelInitializer<Channel>() {
          @Override
          protected void initChannel(Channel channel) {
            if (origin.tls()) {
              SslHandler handshake = tls.get().newHandler(channel.alloc(), origin.host(), origin.port());
              handshake.setHandshakeTimeoutMillis(exchange.request().connectTimeout().toMillis());
              channel.pipeline().addLast(handshake, new Negotiation(exchange));
            }
          }
        });
    ChannelFuture connecting = bootstrap.connect(address(exchange));
    connecting.addListener(done -> {
      if (!done.isSuccess()) {
        connectFailed(exchange, done.cause());
      } else if (origin.tls()) {
        watchHandshake(connecting.channel(), exchange);
      } else {
        ready(connecting.channel(), origin.h2c(), exchange);
      }
    });
  }

  /**
   * Once connected, a TLS connection's handshake: every way it can fail (timed out, closed by the
   * upstream, a certificate refused) fails its future, which the negotiation handler does not
   * report for all of them. Watched only after the TCP connect succeeded, so a failure is reported once.
   */
  private void watchHandshake(Channel channel, NettyExchange exchange) {
    SslHandler handshake = channel.pipeline().get(SslHandler.class);
    if (handshake == null) { // closed already, its handlers gone
      connectFailed(exchange, new ClosedChannelException());
      return;
    }
    handshake.handshakeFuture().addListener(done -> {
      if (!done.isSuccess()) {
        channel.close();
        connectFailed(exchange, done.cause());
      }
    });
  }

  private InetSocketAddress address(NettyExchange exchange) {
    InetSocketAddress resolved = exchange.resolved();
    return resolved != null ? resolved : InetSocketAddress.createUnresolved(origin.host(), origin.port());
  }

  /** A new connection is ready for requests (after ALPN over TLS): set it up and start on it. */
  private void ready(Channel channel, boolean useHttp2, NettyExchange first) {
    if (useHttp2) {
      Http2FrameCodec codec = Http2FrameCodecBuilder.forClient()
          .initialSettings(Http2Settings.defaultSettings().maxHeaderListSize(MAX_HEADER_BYTES))
          .build();
      H2Connection connection = new H2Connection(channel, codec, this, ticker);
      channel.pipeline().addLast(codec, new Http2MultiplexHandler(new ChannelInboundHandlerAdapter()));
      // Each stream is bounded by its own window, given back as its reader takes the data; a
      // connection window as small as one stream's would let one paused stream stall all the others.
      channel.writeAndFlush(new DefaultHttp2WindowUpdateFrame(CONNECTION_WINDOW - Http2CodecUtil.DEFAULT_WINDOW_SIZE));
      shared.add(connection);
      http2 = true;
      negotiating = false;
      connection.open(first, false);
      List<NettyExchange> queued = List.copyOf(waiting);
      waiting.clear();
      queued.forEach(exchange -> acquire(exchange, false));
    } else {
      H1Connection connection = new H1Connection(channel, this);
      channel.pipeline().addLast(new HttpClientCodec(4096, MAX_HEADER_BYTES, 16 * 1024), connection);
      http2 = false;
      negotiating = false;
      connection.start(first, false);
      List<NettyExchange> queued = List.copyOf(waiting);
      waiting.clear();
      queued.forEach(exchange -> acquire(exchange, false));
    }
  }

  private void connectFailed(NettyExchange exchange, Throwable cause) {
    if (negotiating) {
      negotiating = false;
      List<NettyExchange> queued = List.copyOf(waiting);
      waiting.clear();
      queued.forEach(other -> other.failBeforeResponse(cause));
    }
    exchange.failBeforeResponse(cause);
  }

  /** Sets a TLS connection up for the protocol ALPN chose. */
  private final class Negotiation extends ApplicationProtocolNegotiationHandler {
    private final NettyExchange first;

    Negotiation(NettyExchange first) {
      super(ApplicationProtocolNames.HTTP_1_1);
      this.first = first;
    }

    @Override
    protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
      ready(ctx.channel(), ApplicationProtocolNames.HTTP_2.equals(protocol), first);
    }

    /** The handshake's own future reports the failure ({@link #watchHandshake}). */
    @Override
    protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
