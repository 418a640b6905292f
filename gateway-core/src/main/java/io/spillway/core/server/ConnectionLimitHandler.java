package io.spillway.core.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.group.ChannelGroup;
import io.netty.util.AttributeKey;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.OpenAiError;
import java.nio.charset.StandardCharsets;

/**
 * Refuses connections past {@code server.maxConnections} with a plain 503 and an OpenAI error body,
 * so a flood of idle keep-alive connections cannot starve everyone else.
 */
@ChannelHandler.Sharable
final class ConnectionLimitHandler extends ChannelInboundHandlerAdapter {
  private static final AttributeKey<Boolean> COUNTED = AttributeKey.valueOf("spillway.counted");
  private static final byte[] REFUSAL = refusal();

  private final ConnectionTracker connections;
  private final ChannelGroup channels;

  ConnectionLimitHandler(ConnectionTracker connections, ChannelGroup channels) {
    this.connections = connections;
    this.channels = channels;
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) throws Exception {
    if (connections.draining() || !connections.tryOpen()) {
      ctx.writeAndFlush(Unpooled.wrappedBuffer(REFUSAL)).addListener(ChannelFutureListener.CLOSE);
      return;
    }
    ctx.channel().attr(COUNTED).set(Boolean.TRUE);
    channels.add(ctx.channel());
    super.channelActive(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (ctx.channel().attr(COUNTED).getAndSet(null) != null) {
      connections.closed();
    }
    super.channelInactive(ctx);
  }

  private static byte[] refusal() {
    byte[] body =
        new OpenAiError(
                "Spillway is at its connection limit (server.maxConnections); retry shortly",
                ErrorKind.UNAVAILABLE.type(), null, "too_many_connections")
            .toBytes();
    String head = "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
        + "retry-after: 1\r\nconnection: close\r\ncontent-length: " + body.length + "\r\n\r\n";
    byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[headBytes.length + body.length];
    System.arraycopy(headBytes, 0, all, 0, headBytes.length);
    System.arraycopy(body, 0, all, headBytes.length, body.length);
    return all;
  }
}
