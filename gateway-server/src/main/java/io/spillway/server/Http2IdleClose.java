package io.spillway.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.timeout.IdleStateEvent;

/**
 * Closes an HTTP/2 connection that was idle for {@code server.idleTimeout} with no stream open
 * (with a GOAWAY, since the close passes through the frame codec). Open streams watch their own
 * idleness.
 */
final class Http2IdleClose extends ChannelInboundHandlerAdapter {
  private final Http2FrameCodec codec;

  Http2IdleClose(Http2FrameCodec codec) {
    this.codec = codec;
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      if (codec.connection().numActiveStreams() == 0) {
        ctx.channel().close();
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }
}
