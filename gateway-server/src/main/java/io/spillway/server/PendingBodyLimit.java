package io.spillway.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.RequestIds;
import io.spillway.core.pipeline.ErrorMapper;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Holds one request's body (an HTTP/1 connection's, or an HTTP/2 stream's) to the pending-body
 * budgets before it reaches the aggregator: the bytes of a body that has not ended count against
 * the server's budget and, on HTTP/2, the connection's; they leave both when the body ends or the
 * stream or connection goes away. A body that would go past either is refused with 503 {@code
 * too_many_pending_uploads} and {@code Retry-After}, and the rest of it is dropped, so unfinished
 * uploads (many streams each holding most of {@code server.maxRequestSize}) cannot pin the
 * gateway's memory. Confined to the channel's event loop.
 */
final class PendingBodyLimit extends ChannelInboundHandlerAdapter {
  static final String CODE = "too_many_pending_uploads";

  private final PendingBodyBudget overall;
  private final PendingBodyBudget connection;
  private final BooleanSupplier answerPending;
  private long held;
  private boolean refusing;

  /** {@code connection} may be null (HTTP/1: one body at a time, bounded by the request size). */
  PendingBodyLimit(PendingBodyBudget overall, PendingBodyBudget connection, BooleanSupplier answerPending) {
    this.overall = overall;
    this.connection = connection;
    this.answerPending = answerPending;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (!(msg instanceof HttpObject)) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (refusing) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (msg instanceof HttpContent content && content.content().isReadable()) {
      PendingBodyBudget full = reserve(content.content().readableBytes());
      if (full != null) {
        ReferenceCountUtil.release(msg);
        refuse(ctx, full);
        return;
      }
    }
    boolean last = msg instanceof LastHttpContent;
    ctx.fireChannelRead(msg);
    if (last) {
      releaseAll();
    }
  }

  /** Reserves in both budgets, or in neither and answers the one that is full. */
  private PendingBodyBudget reserve(int bytes) {
    if (!overall.tryReserve(bytes)) {
      return overall;
    }
    if (connection != null && !connection.tryReserve(bytes)) {
      overall.release(bytes);
      return connection;
    }
    held += bytes;
    return null;
  }

  private void releaseAll() {
    if (held > 0) {
      overall.release(held);
      if (connection != null) {
        connection.release(held);
      }
      held = 0;
    }
  }

  private void refuse(ChannelHandlerContext ctx, PendingBodyBudget full) {
    releaseAll();
    refusing = true;
    GatewayException error = ErrorKind.UNAVAILABLE.exception(
        "The gateway holds as many unfinished request bodies as it may (" + full.setting()
            + "); send the request again shortly").withCode(CODE).withRetryAfter(Duration.ofSeconds(1));
    if (answerPending.getAsBoolean()) {
      // An HTTP/1 answer is still owed on this connection: the refusal is answered in its turn.
      ctx.fireChannelRead(new HttpRequestHandler.Refusal(ErrorMapper.toResponse(error)));
      return;
    }
    byte[] body = ErrorMapper.body(error.toError());
    FullHttpResponse response = new DefaultFullHttpResponse(
        HttpVersion.HTTP_1_1, HttpResponseStatus.SERVICE_UNAVAILABLE, Unpooled.wrappedBuffer(body));
    response.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "application/json")
        .set(HttpHeaderNames.CONTENT_LENGTH, body.length)
        .set(HttpHeaderNames.RETRY_AFTER, 1)
        .set(HttpHeaderNames.CONNECTION, "close")
        .set("x-request-id", RequestIds.fresh());
    LingeringClose.after(ctx.writeAndFlush(response));
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    releaseAll();
    super.channelInactive(ctx);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseAll();
  }
}
