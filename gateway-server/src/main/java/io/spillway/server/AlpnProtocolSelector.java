package io.spillway.server;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.ssl.ApplicationProtocolNames;
import io.netty.handler.ssl.ApplicationProtocolNegotiationHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * After the TLS handshake, serves the protocol the client chose by ALPN: {@code h2} or
 * {@code http/1.1}; a client that offers neither (or no ALPN at all) speaks HTTP/1.1.
 */
final class AlpnProtocolSelector extends ApplicationProtocolNegotiationHandler {
  private static final Logger log = LoggerFactory.getLogger(AlpnProtocolSelector.class);

  private final FrontEndProtocols protocols;

  AlpnProtocolSelector(FrontEndProtocols protocols) {
    super(ApplicationProtocolNames.HTTP_1_1);
    this.protocols = protocols;
  }

  @Override
  protected void configurePipeline(ChannelHandlerContext ctx, String protocol) {
    if (LingeringClose.discarding(ctx.channel())) {
      return; // refused (connection limit, shutdown): its answer is already on its way
    }
    if (ApplicationProtocolNames.HTTP_2.equals(protocol)) {
      protocols.http2(ctx.pipeline());
    } else {
      protocols.http1(ctx.pipeline());
    }
  }

  @Override
  protected void handshakeFailure(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("TLS handshake failed, closing: {}", cause.toString());
    ctx.close();
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("connection error before the protocol was chosen, closing: {}", cause.getClass().getName());
    ctx.close();
  }

  /** Idle before it said which protocol it speaks: nothing to answer, so just close. */
  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      ctx.close();
      return;
    }
    super.userEventTriggered(ctx, evt);
  }
}
