package io.spillway.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * Answers each request with a slow OpenAI chat-completion stream: the first chunk at once, the
 * rest one per interval from a timer on the channel's event loop (no thread per stream), then the
 * usage chunk when the request asked for it with {@code stream_options.include_usage}, then
 * {@code [DONE]}. A client that goes away stops its timer. On HTTP/1.1 the connection is kept for
 * the next request unless the request said {@code Connection: close}.
 */
final class SlowStreamResponder extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final Pattern INCLUDE_USAGE = Pattern.compile("\"include_usage\"\\s*:\\s*true");
  private static final String EVENT_HEAD = "data: {\"id\":\"chatcmpl-slow\",\"object\":\"chat.completion.chunk\","
      + "\"created\":1741570283,\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"token ";
  private static final String EVENT_TAIL = " \"},\"finish_reason\":null}]}\n\n";
  private static final String USAGE = "data: {\"id\":\"chatcmpl-slow\",\"object\":\"chat.completion.chunk\","
      + "\"created\":1741570283,\"model\":\"gpt-4o-mini\",\"choices\":[],"
      + "\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n";
  private static final String DONE = "data: [DONE]\n\n";

  private final SlowStreamShape shape;
  private ScheduledFuture<?> timer;

  SlowStreamResponder(SlowStreamShape shape) {
    this.shape = shape;
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
    boolean usage = INCLUDE_USAGE.matcher(request.content().toString(StandardCharsets.UTF_8)).find();
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    HttpResponse head = new DefaultHttpResponse(request.protocolVersion(), HttpResponseStatus.OK);
    head.headers()
        .set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream")
        .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_CACHE);
    HttpUtil.setTransferEncodingChunked(head, true);
    ctx.write(head);
    send(ctx, 0, usage, keepAlive);
  }

  /** Sends event {@code index} (or the end) and schedules the next one. */
  private void send(ChannelHandlerContext ctx, int index, boolean usage, boolean keepAlive) {
    timer = null;
    if (!ctx.channel().isActive()) {
      return;
    }
    if (index < shape.events()) {
      ctx.writeAndFlush(new DefaultHttpContent(text(ctx, EVENT_HEAD + index + EVENT_TAIL)));
      timer = ctx.executor().schedule(
          () -> send(ctx, index + 1, usage, keepAlive), shape.interval().toNanos(), TimeUnit.NANOSECONDS);
      return;
    }
    if (usage) {
      int completion = shape.events() * 2;
      ctx.write(new DefaultHttpContent(text(ctx, USAGE.formatted(completion, 20 + completion))));
    }
    ctx.write(new DefaultHttpContent(text(ctx, DONE)));
    var written = ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
    if (!keepAlive) {
      written.addListener(ChannelFutureListener.CLOSE);
    }
  }

  private static ByteBuf text(ChannelHandlerContext ctx, String text) {
    ByteBuf buf = ctx.alloc().buffer(text.length());
    buf.writeCharSequence(text, StandardCharsets.UTF_8);
    return buf;
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
    super.channelInactive(ctx);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
