package io.spillway.server;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last handler of an HTTP/2 connection: the frame codec passes on the connection errors it
 * answers itself (a GOAWAY with the error's code, then the close), and they end here, logged at
 * debug, instead of as a warning about an unhandled exception for every abusive client. Closing
 * here would be wrong: the codec's close would send its own GOAWAY first, with {@code NO_ERROR}.
 */
@ChannelHandler.Sharable
final class Http2ConnectionErrors extends ChannelInboundHandlerAdapter {
  static final Http2ConnectionErrors INSTANCE = new Http2ConnectionErrors();
  private static final Logger log = LoggerFactory.getLogger(Http2ConnectionErrors.class);

  private Http2ConnectionErrors() {}

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("HTTP/2 connection from {} ends: {}", ctx.channel().remoteAddress(), cause.toString());
  }
}
