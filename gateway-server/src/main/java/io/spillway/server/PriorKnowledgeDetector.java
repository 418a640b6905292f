package io.spillway.server;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Tells HTTP/2 with prior knowledge (h2c) from HTTP/1 on a plain connection by its first bytes: an
 * HTTP/2 client opens with the fixed connection preface {@code PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n}
 * (RFC 9113 3.4), which no HTTP/1 request begins with. Waits only while the bytes so far could
 * still be the preface, then hands the connection, those bytes included, to the chosen protocol
 * and steps out.
 */
final class PriorKnowledgeDetector extends ByteToMessageDecoder {
  private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private final FrontEndProtocols protocols;

  PriorKnowledgeDetector(FrontEndProtocols protocols) {
    this.protocols = protocols;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    int seen = Math.min(in.readableBytes(), PREFACE.length);
    for (int i = 0; i < seen; i++) {
      if (in.getByte(in.readerIndex() + i) != PREFACE[i]) {
        protocols.http1(ctx.pipeline());
        ctx.pipeline().remove(this);
        return;
      }
    }
    if (seen == PREFACE.length) {
      protocols.http2(ctx.pipeline());
      ctx.pipeline().remove(this);
    }
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
