package io.spillway.server;

import io.spillway.core.http.RequestIds;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Aggregates request bodies up to {@code server.maxRequestSize}; larger ones get an OpenAI-style 413.
 *
 * <p>While an answer to an earlier request on the connection is still owed (the client pipelines),
 * nothing is written from here, since it would land before or inside that answer: the 413 goes to
 * the request handler as a {@link HttpRequestHandler.Refusal} to be answered in turn, and no
 * {@code 100 Continue} is sent (the client sends its body after its own wait, RFC 9110 10.1.1).
 */
final class RequestBodyAggregator extends HttpObjectAggregator {
  private final int maxBytes;
  private final BooleanSupplier answerPending;

  RequestBodyAggregator(int maxBytes) {
    this(maxBytes, () -> false);
  }

  RequestBodyAggregator(int maxBytes, BooleanSupplier answerPending) {
    super(maxBytes);
    this.maxBytes = maxBytes;
    this.answerPending = answerPending;
  }

  /**
   * Marks a chunk-size line (with its extensions) longer than the decoder's line limit, which
   * Netty reports as {@link TooLongHttpLineException} like an over-long request line: it is a bad
   * body (400), not a long URI (414).
   */
  static final class ChunkLineTooLong extends TooLongFrameException {
    ChunkLineTooLong(Throwable cause) {
      super("A chunk-size line of the request body is too long", cause);
    }
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, HttpObject msg, List<Object> out) throws Exception {
    if (msg instanceof HttpContent && !(msg instanceof HttpMessage)
        && msg.decoderResult().cause() instanceof TooLongHttpLineException tooLong) {
      msg.setDecoderResult(DecoderResult.failure(new ChunkLineTooLong(tooLong)));
    }
    super.decode(ctx, msg, out);
  }

  @Override
  protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
    if (answerPending.getAsBoolean()) {
      return null;
    }
    Object response = super.newContinueResponse(start, maxContentLength, pipeline);
    if (response instanceof FullHttpResponse full
        && full.status().code() == HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE.code()) {
      full.release();
      return tooLarge();
    }
    return response;
  }

  @Override
  protected boolean closeAfterContinueResponse(Object msg) {
    return msg instanceof FullHttpResponse full && full.status().code() == 413 || super.closeAfterContinueResponse(msg);
  }

  @Override
  protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
    if (answerPending.getAsBoolean()) {
      ctx.fireChannelRead(new HttpRequestHandler.Refusal(
          ErrorMapper.toResponse(ErrorKind.REQUEST_TOO_LARGE.exception(tooLargeMessage()))));
    } else {
      // The client may still be sending the body: linger, so the 413 is not lost to a reset.
      LingeringClose.after(ctx.writeAndFlush(tooLarge()));
    }
  }

  private String tooLargeMessage() {
    return "Request body is larger than the gateway's limit of " + maxBytes + " bytes (server.maxRequestSize)";
  }

  private FullHttpResponse tooLarge() {
    byte[] body = ErrorMapper.body(ErrorKind.REQUEST_TOO_LARGE.exception(tooLargeMessage()).toError());
    FullHttpResponse response =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, Unpooled.wrappedBuffer(body));
    response.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "application/json")
        .set(HttpHeaderNames.CONTENT_LENGTH, body.length)
        .set(HttpHeaderNames.CONNECTION, "close")
        .set("x-request-id", RequestIds.fresh());
    return response;
  }
}
