package io.spillway.server.client;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import java.nio.channels.ClosedChannelException;

/**
 * An HTTP/1.1 upstream connection: one exchange at a time, then back to its pool when the answer
 * ended cleanly and the upstream keeps the connection open. The last handler of its pipeline.
 */
final class H1Connection extends ChannelInboundHandlerAdapter {
  private final Channel channel;
  private final OriginPool pool;
  private NettyExchange current;
  private long idleSince;

  H1Connection(Channel channel, OriginPool pool) {
    this.channel = channel;
    this.pool = pool;
  }

  Channel channel() {
    return channel;
  }

  long idleSince() {
    return idleSince;
  }

  void idleSince(long now) {
    idleSince = now;
  }

  void start(NettyExchange exchange, boolean reused) {
    current = exchange;
    exchange.attach(channel, reusable -> finished(exchange, reusable), reused, "http/1.1");
  }

  private void finished(NettyExchange exchange, boolean reusable) {
    if (current != exchange) {
      return;
    }
    current = null;
    if (!channel.config().isAutoRead()) {
      channel.config().setAutoRead(true);
    }
    if (reusable) {
      pool.release(this);
    } else {
      channel.close();
    }
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    NettyExchange exchange = current;
    if (exchange == null) {
      // Nothing was asked: an idle connection the upstream writes to is not one to reuse.
      ReferenceCountUtil.release(msg);
      ctx.close();
      return;
    }
    exchange.onMessage(msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    NettyExchange exchange = current;
    if (exchange != null) {
      exchange.readComplete();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    NettyExchange exchange = current;
    current = null;
    if (exchange != null) {
      exchange.connectionLost(new ClosedChannelException());
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    NettyExchange exchange = current;
    current = null;
    ctx.close();
    if (exchange != null) {
      exchange.connectionLost(cause);
    }
  }
}
