package io.spillway.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import io.spillway.core.error.ErrorKind;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Bounds how long a client may take to send one request, head and body, from its first byte
 * ({@code server.requestReadTimeout}). The idle timeout alone cannot do this: a slowloris client
 * that sends a byte every few hundred milliseconds is never idle. Past the limit the client gets
 * 408 and the connection is closed (after a short linger, so the answer is not lost to a reset).
 *
 * <p>Sits below the HTTP codec so it sees raw bytes. The request handler tells it when a whole
 * request has arrived ({@link #requestReceived}) and when its answer is written
 * ({@link #requestAnswered}); while a request is being served the clock does not run. All methods
 * run on the channel's event loop. The timer is the event loop's scheduler (real time, like
 * Netty's own idle handling), not the gateway's injected clock.
 */
final class RequestReadTimeoutHandler extends ChannelInboundHandlerAdapter {
  private final long timeoutNanos;
  private final Duration timeout;
  private ChannelHandlerContext ctx;
  private ScheduledFuture<?> timer;
  private boolean serving;
  private boolean expired;

  RequestReadTimeoutHandler(Duration timeout) {
    this.timeout = timeout;
    this.timeoutNanos = timeout.toNanos();
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (expired || LingeringClose.discarding(ctx.channel())) {
      ReferenceCountUtil.release(msg);
      return;
    }
    if (timer == null && !serving && msg instanceof ByteBuf bytes && bytes.isReadable()) {
      timer = ctx.executor().schedule(this::expired, timeoutNanos, TimeUnit.NANOSECONDS);
    }
    ctx.fireChannelRead(msg);
  }

  /** A whole request was decoded: stop the clock until its answer is written. */
  void requestReceived() {
    serving = true;
    cancel();
  }

  /** The answer is written; the next request's clock starts with its first byte. */
  void requestAnswered() {
    serving = false;
  }

  private void expired() {
    timer = null;
    if (serving || !ctx.channel().isActive() || LingeringClose.discarding(ctx.channel())) {
      return;
    }
    expired = true;
    byte[] answer = RawResponses.closing(ErrorKind.REQUEST_TIMEOUT, "Request Timeout",
        "The request was not received completely within " + timeout.toMillis()
            + " ms (server.requestReadTimeout)", ErrorKind.REQUEST_TIMEOUT.code(), null);
    LingeringClose.after(ctx.writeAndFlush(Unpooled.wrappedBuffer(answer)));
  }

  private void cancel() {
    if (timer != null) {
      timer.cancel(false);
      timer = null;
    }
  }

  /** Taken out when the connection turns out to be HTTP/2: its clock must not run on. */
  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    cancel();
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    cancel();
    super.channelInactive(ctx);
  }
}
