package io.spillway.server;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.spillway.config.ServerConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.RequestIds;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The event-loop side of one connection: turns each decoded request into a {@link ServerRequest}
 * and hands it to the service on this event loop (the service moves to a virtual thread only for
 * work that may block), one at a time, so answers are never interleaved or reordered.
 *
 * <p>A client that waits for each answer (every SDK) is served without touching the socket's read
 * interest: reading stays on, and the answer's last write and the start of whatever comes next run
 * in one event-loop task. Toggling reads per request cost two {@code epoll_ctl} calls and a second
 * event-loop wake-up (docs/performance.md). A request that arrives while an answer is still owed
 * (pipelining) waits in order, and reading stops until none waits, so a busy client cannot pile up
 * work.
 *
 * <p>A request's answer is owed until its last write, not until its thread ends: a non-blocking
 * stream is relayed on this event loop after the request's thread has returned, and the next
 * request starts from the relay's last write (see {@link ResponseWriter#write}).
 *
 * <p>The request being served learns at once when its client goes away: closing the connection
 * signals its {@link ClientDisconnect}, whatever stage the request is in (waiting for admission,
 * waiting for the upstream's first byte, streaming).
 *
 * <p>HTTP/1.0 clients get streams delimited by closing the connection (they cannot read chunked
 * encoding); requests of a major HTTP version other than 1 are answered 505. An HTTP/2 stream has
 * a handler of its own, reached through a codec that presents the stream as one HTTP/1.1
 * exchange, so it is never taken for an unsupported version.
 *
 * <p>All fields except the writer are confined to the channel's event loop.
 */
final class HttpRequestHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final Logger log = LoggerFactory.getLogger(HttpRequestHandler.class);
  /** What a request that failed unexpectedly is told failed (then: see the log for its id). */
  private static final String FAILED = "Spillway failed to handle the request";

  /** A refusal from an earlier handler ({@link RequestBodyAggregator}), answered in turn, then the end. */
  record Refusal(GatewayResponse response) {}

  /** One decoded request: to be served, or already known to be answered with an error and a close. */
  private record Work(
      ServerRequest request, boolean keepAlive, boolean http10, GatewayResponse rejection, Integer status) {}

  private final HttpService service;
  private final ConnectionTracker connections;
  private final ServerConfig config;
  private final Clock clock;
  /** The HTTP/2 connection's share of requests in flight; null on HTTP/1 (one at a time anyway). */
  private final InFlightShare share;
  private final ArrayDeque<Work> queue = new ArrayDeque<>();
  private ResponseWriter writer;
  private RequestReadTimeoutHandler readTimeout;
  private boolean busy;
  /** The request being served now, until its answer's last write; null when none. */
  private ServerRequest serving;

  HttpRequestHandler(
      HttpService service, ConnectionTracker connections, ServerConfig config, Clock clock) {
    this(service, connections, config, clock, null);
  }

  HttpRequestHandler(HttpService service, ConnectionTracker connections, ServerConfig config, Clock clock,
      InFlightShare share) {
    this.service = service;
    this.connections = connections;
    this.config = config;
    this.clock = clock;
    this.share = share;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    writer = new ResponseWriter(ctx.channel(), config.streamTimeLimit());
    readTimeout = ctx.pipeline().get(RequestReadTimeoutHandler.class);
  }

  /** Whether an answer is owed on this connection. Event loop only. */
  boolean answerPending() {
    return busy || !queue.isEmpty();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
    if (msg instanceof Refusal refusal) {
      if (!LingeringClose.discarding(ctx.channel())) {
        enqueue(ctx, new Work(rejectedRequest(RequestIds.fresh()), false, false, refusal.response(), null));
      }
      return;
    }
    super.channelRead(ctx, msg);
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest msg) {
    if (LingeringClose.discarding(ctx.channel())) {
      return;
    }
    enqueue(ctx, decode(ctx, msg));
  }

  private void enqueue(ChannelHandlerContext ctx, Work work) {
    if (readTimeout != null) {
      readTimeout.requestReceived();
    }
    queue.add(work);
    if (!busy) {
      next(ctx);
    } else {
      ctx.channel().config().setAutoRead(false);
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
    HttpVersion version = msg.protocolVersion();
    if (!supported(version)) {
      GatewayResponse rejection = ErrorMapper.toResponse(ErrorKind.HTTP_VERSION_NOT_SUPPORTED.exception(
          "HTTP version " + version.text() + " is not supported; Spillway speaks HTTP/1.1 and HTTP/1.0"));
      return new Work(rejectedRequest(requestId), false, false, rejection, null);
    }
    boolean http10 = version.minorVersion() == 0;
    try {
      return new Work(toServerRequest(ctx, msg, requestId), HttpUtil.isKeepAlive(msg), http10, null, null);
    } catch (IllegalArgumentException e) {
      GatewayResponse rejection =
          ErrorMapper.toResponse(GatewayException.invalid("Invalid request header: " + e.getMessage(), null));
      return new Work(rejectedRequest(requestId), false, false, rejection, null);
    }
  }

  /**
   * HTTP/1.0 and HTTP/1.1 (a later 1.x minor version is read as 1.1, RFC 9112 2.3). Netty's decoder
   * accepts any {@code NAME/x.y}, so {@code HTTP/2.0} or {@code HTTP/9.9} in HTTP/1 framing ends here.
   */
  static boolean supported(HttpVersion version) {
    return "HTTP".equals(version.protocolName()) && version.majorVersion() == 1;
  }

  /** Starts the next queued request, or reads more when there is none. Event loop only. */
  private void next(ChannelHandlerContext ctx) {
    Work work = queue.poll();
    if (work == null) {
      busy = false;
      if (readTimeout != null) {
        readTimeout.requestAnswered();
      }
      if (!ctx.channel().config().isAutoRead()) {
        ctx.channel().config().setAutoRead(true);
      }
      return;
    }
    busy = true;
    if (work.rejection() != null) {
      ctx.channel().config().setAutoRead(false);
      queue.clear();
      writer.writeAndEnd(work.rejection(), work.request().requestId(), work.status());
      return;
    }
    if (share == null) {
      serve(ctx, work);
      return;
    }
    share.enter(() -> {
      if (!ctx.channel().isActive()) {
        return false;
      }
      serve(ctx, work);
      return true;
    });
  }

  /** Hands a request to the service (its place in the connection's share, if any, is taken). */
  private void serve(ChannelHandlerContext ctx, Work work) {
    boolean keepAlive = work.keepAlive() && !connections.draining();
    connections.requestStarted();
    serving = work.request();
    CompletionStage<GatewayResponse> answer;
    try {
      // On this event loop: the service moves to a virtual thread only for work that may block.
      answer = service.serveAsync(work.request());
    } catch (RuntimeException | Error e) {
      answer = CompletableFuture.failedFuture(e);
    }
    answer.whenComplete((response, failure) -> {
      try {
        answer(ctx, work.request(), keepAlive, work.http10(), response, failure);
      } catch (RuntimeException | Error e) {
        // The connection is closed by then (see answer); a stage would swallow this, so it is logged here.
        log.error("request {}: writing its answer failed", work.request().requestId(), e);
      }
    });
  }

  /** Writes the service's answer, or its failure as an error answer; on whichever thread it arrived. */
  private void answer(ChannelHandlerContext ctx, ServerRequest request, boolean keepAlive, boolean http10,
      GatewayResponse answered, Throwable thrown) {
    GatewayResponse response = answered;
    boolean reusable = keepAlive;
    Throwable failure = thrown == null ? null : Blocking.cause(thrown);
    if (failure instanceof GatewayException e) {
      response = ErrorMapper.toResponse(e);
    } else if (failure instanceof RuntimeException || failure instanceof StackOverflowError) {
      log.error("request {} failed unexpectedly", request.requestId(), failure);
      response = ErrorMapper.toResponse(failure, FAILED, request.requestId());
    } else if (failure != null) {
      // Out of memory, say: the request still gets its answer, and its connection is not reused,
      // since whatever failed may have left it in any state.
      log.error("request {} failed with {}", request.requestId(), failure.toString());
      response = ErrorMapper.toResponse(failure, FAILED, request.requestId());
      reusable = false;
    }
    // An HTTP/1.0 client reads a stream until the connection closes.
    boolean keepOpen = reusable && !connections.draining() && !(http10 && response.isStream());
    AtomicBoolean done = new AtomicBoolean();
    try {
      writer.write(response, request.requestId(), keepOpen, !http10, () -> {
        if (done.compareAndSet(false, true)) {
          afterAnswer(ctx, keepOpen, true);
        }
      });
    } catch (RuntimeException | Error e) {
      if (done.compareAndSet(false, true)) {
        afterAnswer(ctx, keepOpen, false);
      }
      throw e;
    }
  }

  /**
   * Runs when the answer's last write is issued (on the event loop, in the same task: see
   * {@link ResponseWriter#write}), or when writing it failed.
   */
  private void afterAnswer(ChannelHandlerContext ctx, boolean keepOpen, boolean answered) {
    connections.requestFinished();
    Runnable then = () -> {
      serving = null;
      if (share != null) {
        share.leave();
      }
      if (keepOpen && answered && ctx.channel().isActive()) {
        next(ctx);
      } else {
        queue.clear();
        if (!answered) {
          // Whatever went wrong, the client must not wait for an answer that will never come.
          ctx.close();
        }
      }
    };
    if (ctx.executor().inEventLoop()) {
      then.run();
    } else {
      ctx.executor().execute(then);
    }
  }

  private Work undecodable(Throwable cause, String requestId) {
    GatewayException error;
    Integer status = null;
    if (cause instanceof TooLongHttpHeaderException) {
      error = ErrorKind.HEADERS_TOO_LARGE.exception(
          "Request headers are larger than the gateway's limit (server.maxHeaderSize)");
    } else if (cause instanceof RequestBodyAggregator.ChunkLineTooLong) {
      error = GatewayException.invalid(cause.getMessage(), null);
    } else if (cause instanceof TooLongHttpLineException) {
      status = 414;
      error = ErrorKind.INVALID_REQUEST.exception("Request line is too long").withCode("request_uri_too_long");
    } else if (cause instanceof TooLongFrameException) {
      error = ErrorKind.HEADERS_TOO_LARGE.exception("Request headers are too large");
    } else {
      error = GatewayException.invalid("Malformed HTTP request", null);
    }
    GatewayResponse response = ErrorMapper.toResponse(error);
    return new Work(rejectedRequest(requestId), false, false, response, status);
  }

  private ServerRequest rejectedRequest(String requestId) {
    return new ServerRequest(
        "", "", null, Headers.EMPTY, new byte[0], requestId, null, clock.instant(), ClientDisconnect.NEVER);
  }

  private ServerRequest toServerRequest(ChannelHandlerContext ctx, FullHttpRequest msg, String requestId) {
    Headers.Builder headers = Headers.builder();
    boolean http2 = ctx.channel() instanceof Http2StreamChannel;
    for (Map.Entry<String, String> header : msg.headers()) {
      if (http2 && isHttp2Extension(header.getKey())) {
        continue;
      }
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
        remote(ctx.channel().remoteAddress()), clock.instant(), ClientDisconnect.create(),
        ctx.channel().eventLoop());
  }

  /**
   * Whether a header is one Netty adds when it turns an HTTP/2 stream into an HTTP/1 message
   * ({@code x-http2-stream-id}, {@code x-http2-scheme}, ...): bookkeeping of this hop, never
   * passed on.
   */
  private static boolean isHttp2Extension(String name) {
    return name.regionMatches(true, 0, "x-http2-", 0, 8);
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
    ServerRequest gone = serving;
    if (gone != null) {
      gone.disconnect().signal();
    }
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
