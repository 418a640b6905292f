package io.spillway.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2Stream;
import io.netty.util.concurrent.ScheduledFuture;
import io.netty.util.concurrent.Ticker;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Closes an HTTP/2 connection that has had no open stream and no stream frame from its client
 * ({@code HEADERS}, {@code DATA}) for {@code server.idleTimeout}, with a GOAWAY since the close
 * passes through the frame codec. Control frames do not count as use: a client that only sends
 * PING (or SETTINGS, or WINDOW_UPDATE) is idle and is closed like a silent one. Open streams watch
 * their own idleness. Time is the event loop's (real time, like Netty's idle handling and
 * {@link RequestReadTimeoutHandler}), not the gateway's injected clock. Confined to the
 * connection's event loop.
 */
final class Http2IdleClose extends ChannelInboundHandlerAdapter {
  private final long idleMillis;
  private final Ticker ticker;
  private Http2Connection connection;
  private long lastActivity;
  private ScheduledFuture<?> check;

  Http2IdleClose(Duration idleTimeout, Ticker ticker) {
    this.idleMillis = idleTimeout.toMillis();
    this.ticker = ticker;
  }

  /** The connection whose streams are watched; before the handler is added. */
  void watch(Http2Connection watched) {
    this.connection = watched;
    watched.addListener(new Http2ConnectionAdapter() {
      @Override
      public void onStreamClosed(Http2Stream stream) {
        streamActivity();
      }
    });
  }

  void streamActivity() {
    lastActivity = TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime());
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    lastActivity = TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime());
    schedule(ctx, idleMillis);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    if (check != null) {
      check.cancel(false);
    }
  }

  private void schedule(ChannelHandlerContext ctx, long delayMillis) {
    check = ctx.executor().schedule(() -> check(ctx), Math.max(1, delayMillis), TimeUnit.MILLISECONDS);
  }

  private void check(ChannelHandlerContext ctx) {
    if (!ctx.channel().isActive()) {
      return;
    }
    if (connection.numActiveStreams() > 0) {
      schedule(ctx, idleMillis);
      return;
    }
    long idleFor = TimeUnit.NANOSECONDS.toMillis(ticker.nanoTime()) - lastActivity;
    if (idleFor >= idleMillis) {
      ctx.channel().close();
    } else {
      schedule(ctx, idleMillis - idleFor);
    }
  }
}
