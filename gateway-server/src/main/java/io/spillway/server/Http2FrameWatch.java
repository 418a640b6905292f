package io.spillway.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http2.Http2FrameLogger;
import io.netty.handler.codec.http2.Http2Headers;
import io.netty.handler.logging.LogLevel;

/**
 * Sees every frame one HTTP/2 connection reads and writes, as the frame codec reports them to its
 * frame logger (the one hook Netty gives that sees the server's own {@code RST_STREAM} frames,
 * whichever part of the codec writes them). It logs nothing: it counts resets, both ways, against
 * the connection's {@link Http2ResetBudget}, and tells {@link Http2IdleClose} when the client does
 * something with a stream, so that a connection that only PINGs is idle.
 */
final class Http2FrameWatch extends Http2FrameLogger {
  private final Http2ResetBudget resets;
  private final Http2IdleClose idle;

  Http2FrameWatch(Http2ResetBudget resets, Http2IdleClose idle) {
    super(LogLevel.TRACE, Http2FrameWatch.class);
    this.resets = resets;
    this.idle = idle;
  }

  @Override
  public boolean isEnabled() {
    return false;
  }

  @Override
  public void logRstStream(Direction direction, ChannelHandlerContext ctx, int streamId, long errorCode) {
    resets.reset(ctx);
  }

  @Override
  public void logHeaders(Direction direction, ChannelHandlerContext ctx, int streamId, Http2Headers headers,
      int padding, boolean endStream) {
    streamActivity(direction);
  }

  @Override
  public void logHeaders(Direction direction, ChannelHandlerContext ctx, int streamId, Http2Headers headers,
      int streamDependency, short weight, boolean exclusive, int padding, boolean endStream) {
    streamActivity(direction);
  }

  @Override
  public void logData(Direction direction, ChannelHandlerContext ctx, int streamId, ByteBuf data, int padding,
      boolean endStream) {
    streamActivity(direction);
  }

  private void streamActivity(Direction direction) {
    if (direction == Direction.INBOUND) {
      idle.streamActivity();
    }
  }
}
