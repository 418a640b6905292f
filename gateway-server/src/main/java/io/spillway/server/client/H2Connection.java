package io.spillway.server.client;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2GoAwayFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamChannelBootstrap;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.util.ReferenceCountUtil;
import io.spillway.core.time.Ticker;
import java.nio.channels.ClosedChannelException;

/**
 * An HTTP/2 upstream connection shared by many exchanges, each on a stream of its own (a child
 * channel that reads and writes HTTP/1.1-shaped messages, so one exchange serves both protocols).
 * A stream's flow-control window is given back only as its reader takes the data, so a slow client
 * slows its own stream and no other.
 */
final class H2Connection {
  private final Channel parent;
  private final Http2FrameCodec codec;
  private final OriginPool pool;
  private final Ticker ticker;
  private int streams;
  private long idleSince;
  private boolean draining;

  H2Connection(Channel parent, Http2FrameCodec codec, OriginPool pool, Ticker ticker) {
    this.parent = parent;
    this.codec = codec;
    this.pool = pool;
    this.ticker = ticker;
    this.idleSince = ticker.read();
    parent.closeFuture().addListener(closed -> pool.removed(this));
  }

  Channel parent() {
    return parent;
  }

  boolean usable() {
    return parent.isActive() && !draining && !codec.connection().goAwayReceived();
  }

  boolean hasRoom() {
    return usable() && streams < codec.connection().local().maxActiveStreams();
  }

  long idleFor(long now) {
    return streams > 0 ? 0 : now - idleSince;
  }

  /** Closes the connection once its last stream ends (at once when it has none). */
  void closeWhenIdle() {
    draining = true;
    if (streams == 0) {
      parent.close();
    }
  }

  void open(NettyExchange exchange, boolean reused) {
    streams++;
    new Http2StreamChannelBootstrap(parent)
        .handler(new ChannelInitializer<Http2StreamChannel>() {
          @Override
          protected void initChannel(Http2StreamChannel stream) {
            stream.pipeline().addLast(new Http2StreamFrameToHttpObjectCodec(false), new StreamHandler(exchange));
          }
        })
        .open()
        .addListener(opened -> {
          if (!opened.isSuccess()) {
            streamEnded();
            exchange.connectionLost(null, opened.cause());
            return;
          }
          Http2StreamChannel stream = (Http2StreamChannel) opened.getNow();
          stream.closeFuture().addListener(closed -> streamEnded());
          exchange.attach(stream, reusable -> stream.close(), reused, "h2");
        });
  }

  private void streamEnded() {
    streams--;
    if (streams == 0) {
      idleSince = ticker.read();
      if (draining) {
        parent.close();
      }
    }
  }

  /** Hands a stream's messages and end to its exchange. */
  private static final class StreamHandler extends ChannelInboundHandlerAdapter {
    private final NettyExchange exchange;

    StreamHandler(NettyExchange exchange) {
      this.exchange = exchange;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      exchange.onMessage(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
      exchange.readComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      exchange.connectionLost(ctx.channel(), new ClosedChannelException());
    }

    /**
     * The upstream said it did not process this stream: reset with REFUSED_STREAM, or a GOAWAY
     * whose last stream is below it (the multiplexer hands that only to such streams).
     */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      try {
        if (event instanceof Http2GoAwayFrame
            || event instanceof Http2ResetFrame reset && reset.errorCode() == Http2Error.REFUSED_STREAM.code()) {
          exchange.refused(ctx.channel());
        }
      } finally {
        ReferenceCountUtil.release(event);
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
      exchange.connectionLost(ctx.channel(), cause);
    }
  }
}
