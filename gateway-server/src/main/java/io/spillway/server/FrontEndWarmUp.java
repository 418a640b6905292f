package io.spillway.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;

/**
 * Loads what the front end's first request needs, off the event loop: the native transport, the
 * HTTP/1.1 codec decoding a request and encoding an answer, and the buffer allocator. Start-up runs
 * it on a warm-up thread while the gateway is being built, so the first request (typically a
 * readiness probe) does not pay for that class loading on the event loop. It goes through a
 * throw-away in-memory channel: no socket, no service, nothing kept.
 */
final class FrontEndWarmUp {
  private static final byte[] REQUEST =
      "GET /readyz HTTP/1.1\r\nhost: localhost\r\nuser-agent: warm-up\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

  private FrontEndWarmUp() {}

  /** Runs the warm-up; returns the status line of the answer it encoded. */
  static String run() {
    Epoll.isAvailable();
    EmbeddedChannel channel = new EmbeddedChannel(new HttpServerCodec());
    try {
      channel.writeInbound(Unpooled.wrappedBuffer(REQUEST));
      for (Object decoded; (decoded = channel.readInbound()) != null; ) {
        ReferenceCountUtil.release(decoded);
      }
      ByteBuf body = channel.alloc().buffer().writeBytes("{\"status\":\"ready\"}".getBytes(StandardCharsets.US_ASCII));
      DefaultFullHttpResponse answer = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK, body);
      answer.headers().set(HttpHeaderNames.CONTENT_TYPE, "application/json")
          .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
      channel.writeOutbound(answer);
      StringBuilder encoded = new StringBuilder();
      for (Object out; (out = channel.readOutbound()) != null; ) {
        if (out instanceof ByteBuf bytes) {
          encoded.append(bytes.toString(StandardCharsets.US_ASCII));
        }
        ReferenceCountUtil.release(out);
      }
      int end = encoded.indexOf("\r\n");
      return end < 0 ? encoded.toString() : encoded.substring(0, end);
    } finally {
      channel.finishAndReleaseAll();
    }
  }
}
