package io.spillway.core.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.spillway.core.config.ServerConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayResponse;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-loop side of one connection: turns a decoded request into a {@link ServerRequest} and
 * hands it to a virtual thread.
 *
 * <p>Requests on one connection are answered one at a time, in the order they arrived. A client
 * that waits for each answer (every SDK) is served without touching the socket's read interest:
 * reading stays on, and the answer's virtual thread writes and is done. A client that pipelines
 * gets its further requests queued here, in order, and reading stops while any wait, so a busy
 * client cannot pile up work; the next one starts when the answer before it has been written.
 */
final class HttpRequestHandler extends ChannelInboundHandlerAdapter {
  private static final Logger log = LoggerFactory.getLogger(HttpRequestHandler.class);

  private final HttpService service;
  private final Executor requestThreads;
  private final ConnectionTracker connections;
  private final ServerConfig config;
  private final Clock clock;
  /** Requests received and not yet answered: the one being served and those queued behind it. */
  private final AtomicInteger unanswered = new AtomicInteger();
  /** Pipelined requests (and refusals) waiting for their turn; touched on the event loop only. */
  private final ArrayDeque<Object> waiting = new ArrayDeque<>();
  private ChannelHandlerContext ctx;
  private ResponseWriter writer;

  HttpRequestHandler(
      HttpService service, Executor requestThreads, ConnectionTracker connections, ServerConfig config,
      Clock clock) {
    this.service = service;
    this.requestThreads = requestThreads;
    this.connections = connections;
    this.config = config;
    this.clock = clock;
  }

  /** A refusal from an earlier handler (see {@link RequestBodyAggregator}), answered in turn. */
  record Refusal(FullHttpResponse response) {}

  /** Whether an answer is still owed on this connection; any thread. */
  boolean answerPending() {
    return unanswered.get() > 0;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    writer = new ResponseWriter(ctx.channel(), config.streamTimeLimit(), clock);
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof FullHttpRequest) && !(msg instanceof Refusal)) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (unanswered.getAndIncrement() > 0) {
      waiting.add(msg);
      ctx.channel().config().setAutoRead(false);
      return;
    }
    startAndRelease(msg);
  }

  /** Starts answering {@code msg}, which the caller counted in {@link #unanswered}; event loop. */
  private void startAndRelease(Object msg) {
    try {
      if (msg instanceof Refusal refusal) {
        ctx.writeAndFlush(refusal.response()).addListener(ChannelFutureListener.CLOSE);
        answered(false);
      } else {
        start((FullHttpRequest) msg);
      }
    } finally {
      if (msg instanceof FullHttpRequest request) {
        request.release();
      }
    }
  }

  private void start(FullHttpRequest msg) {
    String requestId = RequestIds.acceptable(msg.headers().get("x-request-id"));
    if (requestId == null) {
      requestId = RequestIds.fresh();
    }
    if (msg.decoderResult().isFailure()) {
      rejectUndecodable(msg.decoderResult().cause(), requestId);
      answered(false);
      return;
    }
    boolean keepAlive = HttpUtil.isKeepAlive(msg) && !connections.draining();
    ServerRequest request;
    try {
      request = toServerRequest(ctx, msg, requestId);
    } catch (IllegalArgumentException e) {
      writer.writeDetached(
          GatewayResponse.error(GatewayException.invalid("Invalid request header: " + e.getMessage(), null)),
          requestId, false, null);
      answered(false);
      return;
    }
    connections.requestStarted();
    try {
      requestThreads.execute(() -> serve(request, keepAlive));
    } catch (RejectedExecutionException e) {
      connections.requestFinished();
      writer.writeDetached(
          GatewayResponse.error(GatewayException.of(ErrorKind.UNAVAILABLE, "Spillway is shutting down", null)),
          requestId, false, null);
      answered(false);
    }
  }

  /**
   * The current answer's last write is issued; the next waiting request, if any, starts on the
   * event loop. Any thread, though answers written from a request thread call it on the event loop
   * (see {@link ResponseWriter#write}), so a client that waits for each answer never finds one owed.
   */
  private void answered(boolean keepOpen) {
    if (unanswered.decrementAndGet() > 0 && keepOpen) {
      ctx.executor().execute(this::startNext);
    }
  }

  private void startNext() {
    Object next = waiting.poll();
    if (next == null) {
      return;
    }
    if (!ctx.channel().isActive()) {
      release(next);
      return;
    }
    if (waiting.isEmpty()) {
      ctx.channel().config().setAutoRead(true);
    }
    startAndRelease(next);
  }

  private void serve(ServerRequest request, boolean keepAlive) {
    GatewayResponse response;
    try {
      response = service.serve(request);
    } catch (GatewayException e) {
      response = GatewayResponse.error(e);
    } catch (RuntimeException e) {
      log.error("request {} failed unexpectedly", request.requestId(), e);
      response = GatewayResponse.error(
          GatewayException.of(ErrorKind.INTERNAL, "Spillway failed to handle the request; see its log for "
              + request.requestId(), null));
    }
    boolean keepOpen = keepAlive && !connections.draining();
    AtomicBoolean done = new AtomicBoolean();
    Runnable written = () -> {
      if (done.compareAndSet(false, true)) {
        connections.requestFinished();
        answered(keepOpen && ctx.channel().isActive());
      }
    };
    try {
      writer.write(response, request.requestId(), keepOpen, request.path(), written);
    } catch (RuntimeException | Error e) {
      written.run();
      throw e;
    }
  }

  private void rejectUndecodable(Throwable cause, String requestId) {
    GatewayException error;
    if (cause instanceof TooLongHttpHeaderException) {
      error = GatewayException.of(ErrorKind.HEADERS_TOO_LARGE,
          "Request headers are larger than the gateway's limit (server.maxHeaderSize)", null);
    } else if (cause instanceof TooLongHttpLineException) {
      error = new GatewayException(ErrorKind.INVALID_REQUEST, "Request line is too long", null,
          "request_uri_too_long", null, null);
    } else if (cause instanceof TooLongFrameException) {
      error = GatewayException.of(ErrorKind.HEADERS_TOO_LARGE, "Request headers are too large", null);
    } else {
      error = GatewayException.invalid("Malformed HTTP request", null);
    }
    GatewayResponse response = GatewayResponse.error(error);
    int status = cause instanceof TooLongHttpLineException ? 414 : response.status();
    writer.writeDetached(response, requestId, false, status == response.status() ? null : status);
  }

  private ServerRequest toServerRequest(ChannelHandlerContext ctx, FullHttpRequest msg, String requestId) {
    Headers.Builder headers = Headers.builder();
    for (Map.Entry<String, String> header : msg.headers()) {
      headers.add(header.getKey(), header.getValue());
    }
    ByteBuf content = msg.content();
    byte[] body = content.isReadable() ? ByteBufUtil.getBytes(content) : new byte[0];
    String uri = msg.uri();
    int q = uri.indexOf('?');
    String path = q < 0 ? uri : uri.substring(0, q);
    String query = q < 0 ? null : uri.substring(q + 1);
    return new ServerRequest(
        msg.method().name(), path, query, headers.build(), body, requestId,
        remote(ctx.channel().remoteAddress()), clock.instant());
  }

  private static String remote(SocketAddress address) {
    return address instanceof InetSocketAddress inet ? inet.getAddress().getHostAddress() : String.valueOf(address);
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
    writer.writabilityChanged();
    super.channelWritabilityChanged(ctx);
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) throws Exception {
    writer.connectionClosed();
    releaseWaiting();
    super.channelInactive(ctx);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    releaseWaiting();
  }

  private void releaseWaiting() {
    Object msg;
    while ((msg = waiting.poll()) != null) {
      release(msg);
    }
  }

  private static void release(Object msg) {
    ReferenceCountUtil.release(msg instanceof Refusal refusal ? refusal.response() : msg);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent && !answerPending()) {
      ctx.close();
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("connection error, closing: {}", cause.toString());
    ctx.close();
  }
}
