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
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-loop side of one connection: turns a decoded request into a {@link ServerRequest}, hands
 * it to a virtual thread, and stops reading until the answer is written, so requests on one
 * connection are answered in order and a busy client cannot pile up work.
 */
final class HttpRequestHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final Logger log = LoggerFactory.getLogger(HttpRequestHandler.class);

  private final HttpService service;
  private final Executor requestThreads;
  private final ConnectionTracker connections;
  private final ServerConfig config;
  private final Clock clock;
  private ResponseWriter writer;
  private volatile boolean busy;

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
    writer = new ResponseWriter(ctx.channel(), config.streamTimeLimit(), clock);
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest msg) {
    String requestId = RequestIds.acceptable(msg.headers().get("x-request-id"));
    if (requestId == null) {
      requestId = RequestIds.fresh();
    }
    if (msg.decoderResult().isFailure()) {
      rejectUndecodable(msg.decoderResult().cause(), requestId);
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
      return;
    }
    busy = true;
    ctx.channel().config().setAutoRead(false);
    connections.requestStarted();
    try {
      requestThreads.execute(() -> serve(ctx, request, keepAlive));
    } catch (RejectedExecutionException e) {
      connections.requestFinished();
      busy = false;
      writer.writeDetached(
          GatewayResponse.error(GatewayException.of(ErrorKind.UNAVAILABLE, "Spillway is shutting down", null)),
          requestId, false, null);
    }
  }

  private void serve(ChannelHandlerContext ctx, ServerRequest request, boolean keepAlive) {
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
    try {
      writer.write(response, request.requestId(), keepOpen, request.path());
    } finally {
      connections.requestFinished();
      busy = false;
      if (keepOpen && ctx.channel().isActive()) {
        ctx.channel().eventLoop().execute(() -> {
          ctx.channel().config().setAutoRead(true);
          ctx.read();
        });
      }
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
    super.channelInactive(ctx);
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
    if (evt instanceof IdleStateEvent && !busy) {
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
