package io.spillway.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import io.spillway.core.error.ErrorKind;

/**
 * Refuses connections past {@code server.maxConnections} with a 503 and an OpenAI error body, so a
 * flood of idle keep-alive connections cannot starve everyone else. A refused connection is never
 * served: whatever it sends before it is closed is discarded.
 */
@ChannelHandler.Sharable
final class ConnectionLimitHandler extends ChannelInboundHandlerAdapter {
  private static final AttributeKey<Boolean> COUNTED = AttributeKey.valueOf("spillway.counted");
  private static final AttributeKey<Boolean> REFUSED = AttributeKey.valueOf("spillway.refused");

  private final ConnectionTracker connections;
  private final ChannelGroup channels;

  ConnectionLimitHandler(ConnectionTracker connections, ChannelGroup channels) {
    this.connections = connections;
    this.channels = channels;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    boolean draining = connections.draining();
    if (draining || !connections.tryOpen()) {
      ctx.channel().attr(REFUSED).set(Boolean.TRUE);
      byte[] refusal = draining
          ? RawResponses.closing(ErrorKind.UNAVAILABLE, "Service Unavailable",
              "Spillway is shutting down; retry shortly", ErrorKind.UNAVAILABLE.code(), 1)
          : RawResponses.closing(ErrorKind.UNAVAILABLE, "Service Unavailable",
              "Spillway is at its connection limit (server.maxConnections); retry shortly",
              "too_many_connections", 1);
      LingeringClose.after(ctx.writeAndFlush(Unpooled.wrappedBuffer(refusal)));
      return;
    }
    ctx.channel().attr(COUNTED).set(Boolean.TRUE);
    channels.add(ctx.channel());
    super.channelActive(ctx);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (ctx.channel().hasAttr(REFUSED)) {
      ReferenceCountUtil.release(msg);
      return;
    }
    super.channelRead(ctx, msg);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (ctx.channel().attr(COUNTED).getAndSet(null) != null) {
      connections.closed();
    }
    super.channelInactive(ctx);
  }
}
