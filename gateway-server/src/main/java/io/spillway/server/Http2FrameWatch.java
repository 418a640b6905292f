package io.spillway.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http2.Http2Connection;
import io.netty.handler.codec.http2.Http2ConnectionAdapter;
import io.netty.handler.codec.http2.Http2DataFrame;
import io.netty.handler.codec.http2.Http2HeadersFrame;
import io.netty.handler.codec.http2.Http2ResetFrame;
import io.netty.handler.codec.http2.Http2Stream;

/**
 * Sits between an HTTP/2 connection's frame codec and its stream multiplexer and watches what the
 * client does: each {@code RST_STREAM} it sends, and each stream the server itself reset (seen when
 * the stream closes with a reset sent, whoever in the codec or a stream channel sent it), count
 * against the connection's {@link Http2ResetBudget}; {@code HEADERS} and {@code DATA} from the client
 * tell {@link Http2IdleClose} the connection is in use (PING and the other control frames do not).
 * Resets of streams the codec never opened (a stream over {@code SETTINGS_MAX_CONCURRENT_STREAMS})
 * are counted by Netty's own outbound guard, set to the same budget. Confined to the connection's
 * event loop.
 */
final class Http2FrameWatch extends ChannelInboundHandlerAdapter {
  private final Http2ResetBudget resets;
  private final Http2IdleClose idle;
  private final String codecName;

  Http2FrameWatch(Http2ResetBudget resets, Http2IdleClose idle, String codecName) {
    this.resets = resets;
    this.idle = idle;
    this.codecName = codecName;
  }

  /** Counts the server's own resets of {@code connection}'s streams; before the handler is added. */
  void watch(Http2Connection connection, io.netty.channel.ChannelPipeline pipeline) {
    connection.addListener(new Http2ConnectionAdapter() {
      @Override
      public void onStreamClosed(Http2Stream stream) {
        if (stream.isResetSent()) {
          ChannelHandlerContext codec = pipeline.context(codecName);
          if (codec != null) {
            resets.reset(codec);
          }
        }
      }
    });
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof Http2DataFrame || msg instanceof Http2HeadersFrame) {
      idle.streamActivity();
    } else if (msg instanceof Http2ResetFrame) {
      ChannelHandlerContext codec = ctx.pipeline().context(codecName);
      if (codec != null) {
        resets.reset(codec);
      }
    }
    ctx.fireChannelRead(msg);
  }
}
