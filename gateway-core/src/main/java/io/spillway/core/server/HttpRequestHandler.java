package io.spillway.core.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-loop side of one connection: turns each decoded request into a {@link ServerRequest}
 * and serves it on a virtual thread, one at a time. Reading stops while a request is served, so a
 * busy client cannot pile up work; requests a client pipelined into the same read wait in order,
 * so answers are never interleaved or reordered.
 *
 * <p>All fields except the writer are confined to the channel's event loop.
 */
final class HttpRequestHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final Logger log = LoggerFactory.getLogger(HttpRequestHandler.class);

  /** One decoded request: to be served, or already known to be answered with an error and a close. */
  private record Work(ServerRequest request, boolean keepAlive, GatewayResponse rejection, Integer status) {}

  private final HttpService service;
  private final Executor requestThreads;
  private final ConnectionTracker connections;
  private final ServerConfig config;
  private final Clock clock;
  private final ArrayDeque<Work> queue = new ArrayDeque<>();
  private ResponseWriter writer;
  private RequestReadTimeoutHandler readTimeout;
  private boolean busy;

  HttpRequestHandler(
      HttpService service, Executor requestThreads, ConnectionTracker connections, ServerConfig config,
      Clock clock) {
    this.service = service;
    this.requestThreads = requestThreads;
    this.connections = connections;
    this.config = config;
    this.clock = clock;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    writer = new ResponseWriter(ctx.channel(), config.streamTimeLimit());
    readTimeout = ctx.pipeline().get(RequestReadTimeoutHandler.class);
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest msg) {
    if (LingeringClose.discarding(ctx.channel())) {
      return;
    }
    if (readTimeout != null) {
      readTimeout.requestReceived();
    }
    queue.add(decode(ctx, msg));
    if (!busy) {
      next(ctx);
    }
  }

  private Work decode(ChannelHandlerContext ctx, FullHttpRequest msg) {
    String requestId = RequestIds.acceptable(msg.headers().get("x-request-id"));
    if (requestId == null) {
      requestId = RequestIds.fresh();
    }
    if (msg.decoderResult().isFailure()) {
      return undecodable(msg.decoderResult().cause(), requestId);
    }
    try {
      return new Work(toServerRequest(ctx, msg, requestId), HttpUtil.isKeepAlive(msg), null, null);
    } catch (IllegalArgumentException e) {
      GatewayResponse rejection =
          GatewayResponse.error(GatewayException.invalid("Invalid request header: " + e.getMessage(), null));
      return new Work(rejectedRequest(requestId), false, rejection, null);
    }
  }

  /** Starts the next queued request, or reads more when there is none. Event loop only. */
  private void next(ChannelHandlerContext ctx) {
    Work work = queue.poll();
    if (work == null) {
      busy = false;
      if (readTimeout != null) {
        readTimeout.requestAnswered();
      }
      ctx.channel().config().setAutoRead(true);
      ctx.read();
      return;
    }
    busy = true;
    ctx.channel().config().setAutoRead(false);
    if (work.rejection() != null) {
      queue.clear();
      writer.writeAndEnd(work.rejection(), work.request().requestId(), work.status());
      return;
    }
    boolean keepAlive = work.keepAlive() && !connections.draining();
    connections.requestStarted();
    try {
      requestThreads.execute(() -> serve(ctx, work.request(), keepAlive));
    } catch (RejectedExecutionException e) {
      connections.requestFinished();
      queue.clear();
      writer.writeAndEnd(
          GatewayResponse.error(GatewayException.of(ErrorKind.UNAVAILABLE, "Spillway is shutting down", null)),
          work.request().requestId(), null);
    }
  }

  private void serve(ChannelHandlerContext ctx, ServerRequest request, boolean keepAlive) {
    GatewayResponse response;
    try {
      response = service.serve(request);
    } catch (GatewayException e) {
      response = GatewayResponse.error(e);
    } catch (RuntimeException | StackOverflowError e) {
      log.error("request {} failed unexpectedly", request.requestId(), e);
      response = GatewayResponse.error(
          GatewayException.of(ErrorKind.INTERNAL, "Spillway failed to handle the request; see its log for "
              + request.requestId(), null));
    }
    boolean keepOpen = keepAlive && !connections.draining();
    boolean written = false;
    try {
      writer.write(response, request.requestId(), keepOpen, request.path());
      written = true;
    } finally {
      connections.requestFinished();
      boolean answered = written;
      boolean reuse = keepOpen && answered;
      ctx.channel().eventLoop().execute(() -> {
        if (reuse && ctx.channel().isActive()) {
          next(ctx);
        } else {
          queue.clear();
          if (!answered) {
            // Whatever went wrong, the client must not wait for an answer that will never come.
            ctx.close();
          }
        }
      });
    }
  }

  private Work undecodable(Throwable cause, String requestId) {
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
    Integer status = cause instanceof TooLongHttpLineException ? 414 : null;
    return new Work(rejectedRequest(requestId), false, response, status);
  }

  private ServerRequest rejectedRequest(String requestId) {
    return new ServerRequest("", "", null, Headers.EMPTY, new byte[0], requestId, null, clock.instant());
  }

  private ServerRequest toServerRequest(ChannelHandlerContext ctx, FullHttpRequest msg, String requestId) {
    Headers.Builder headers = Headers.builder();
    for (Map.Entry<String, String> header : msg.headers()) {
      headers.add(header.getKey(), header.getValue());
    }
    ByteBuf content = msg.content();
    byte[] body = content.isReadable() ? ByteBufUtil.getBytes(content) : new byte[0];
    String uri = originForm(msg.uri());
    int q = uri.indexOf('?');
    String path = q < 0 ? uri : uri.substring(0, q);
    String query = q < 0 ? null : uri.substring(q + 1);
    return new ServerRequest(
        msg.method().name(), path, query, headers.build(), body, requestId,
        remote(ctx.channel().remoteAddress()), clock.instant());
  }

  /**
   * The path and query of a request target. HTTP/1.1 servers must accept the absolute form
   * ({@code POST http://host/v1/...}); its scheme and authority are dropped, never used: where the
   * gateway connects is fixed by its configuration alone.
   */
  static String originForm(String uri) {
    int schemeEnd = uri.indexOf("://");
    boolean absolute = (schemeEnd == 4 && uri.regionMatches(true, 0, "http", 0, 4))
        || (schemeEnd == 5 && uri.regionMatches(true, 0, "https", 0, 5));
    if (!absolute) {
      return uri;
    }
    int authorityStart = schemeEnd + 3;
    int end = authorityStart;
    while (end < uri.length() && uri.charAt(end) != '/' && uri.charAt(end) != '?') {
      end++;
    }
    if (end == uri.length()) {
      return "/";
    }
    return uri.charAt(end) == '?' ? "/" + uri.substring(end) : uri.substring(end);
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
    queue.clear();
    writer.connectionClosed();
    super.channelInactive(ctx);
  }

  /**
   * Idle past {@code server.idleTimeout}: closes a connection with nothing in flight, and one whose
   * answer is stuck because the client stopped reading (nothing moved either way for that long).
   */
  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent) {
      if (!busy || writer.waitingForClient()) {
        ctx.close();
      }
      return;
    }
    super.userEventTriggered(ctx, evt);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    log.debug("connection error, closing: {}", cause.getClass().getName());
    ctx.close();
  }
}
