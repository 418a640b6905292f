package io.spillway.server.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.ScheduledFuture;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.http.Headers;
import io.spillway.core.time.DurationText;
import io.spillway.core.upstream.BodyBuffer;
import io.spillway.core.upstream.BodySource;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.channels.ClosedChannelException;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One request upstream, from finding it a connection to the end of its answer. Everything but
 * {@link #cancel} and the body's reader runs on the exchange's event loop.
 *
 * <p>Bounded in time by the request's head timeout (the whole head must be in) and, for a buffered
 * answer, its whole timeout; a stream's reader bounds each event ({@code UpstreamEventStream}). A
 * pooled connection found closed before the request went out on it (the upstream had closed it
 * while idle) is replaced once by a fresh connection; once the request is out, it may be running
 * upstream, so it is never sent twice. The body is read only as fast as it is taken:
 * past the body buffer's high-water mark the connection (or HTTP/2 stream) stops reading.
 */
final class NettyExchange implements UpstreamExchange {
  private final OutboundRequest request;
  private final EventLoop loop;
  private final Origin origin;
  private final InetSocketAddress resolved;
  private final CompletableFuture<UpstreamHead> head = new CompletableFuture<>();
  private final BodyBuffer body;
  private volatile boolean cancelled;
  private OriginPool pool;
  private Channel channel;
  private Consumer<Boolean> lease;
  private boolean reused;
  private boolean retried;
  private Channel avoid;
  /** Whether the request went out whole on the current connection (then it may have run upstream). */
  private boolean written;
  private boolean informational;
  private boolean keepAlive;
  private boolean done;
  /** The head, once in, until it is handed to the waiting thread (see {@link #readComplete}). */
  private UpstreamHead arrived;
  /** The protocol of the connection the request went out on ({@code h2} or {@code http/1.1}). */
  private String protocolName;
  /** Whether the body's buffer filled up: its reader must start before the rest can come. */
  private boolean readingStopped;
  private ScheduledFuture<?> headTimer;
  private ScheduledFuture<?> wholeTimer;

  NettyExchange(OutboundRequest request, EventLoop loop, int bodyHighWater) {
    this.request = request;
    this.loop = loop;
    this.origin = Origin.of(request.uri(), request.h2c());
    this.resolved = resolve(origin);
    this.body = new BodyBuffer(bodyHighWater, this::resumeReading, this::cancel);
  }

  /**
   * The origin's address, looked up on the sending thread (a virtual thread; the JDK caches
   * lookups), never on an event loop, where a slow DNS answer would stall every connection of the
   * loop. Null when sent from an event loop, or when the lookup failed: the connect then resolves.
   */
  private static InetSocketAddress resolve(Origin origin) {
    if (Thread.currentThread() instanceof FastThreadLocalThread) {
      return null;
    }
    try {
      return new InetSocketAddress(InetAddress.getByName(origin.host()), origin.port());
    } catch (UnknownHostException e) {
      return null;
    }
  }

  /** The HTTP/2 connection a retried exchange must not go back to; null: any. */
  Channel avoid() {
    return avoid;
  }

  /** Whether the exchange has ended (answered, failed or cancelled). Called on its loop. */
  boolean ended() {
    return done;
  }

  OutboundRequest request() {
    return request;
  }

  InetSocketAddress resolved() {
    return resolved;
  }

  @Override
  public CompletableFuture<UpstreamHead> head() {
    return head;
  }

  @Override
  public BodySource body() {
    return body;
  }

  @Override
  public Runnable schedule(Duration delay, Runnable action) {
    ScheduledFuture<?> timer = loop.schedule(action, delay.toNanos(), TimeUnit.NANOSECONDS);
    return () -> timer.cancel(false);
  }

  @Override
  public void cancel() {
    cancelled = true;
    if (loop.inEventLoop()) {
      abort();
    } else {
      loop.execute(this::abort);
    }
  }

  void start(LoopPool pools) {
    if (cancelled) {
      abort();
      return;
    }
    pool = pools.origin(origin);
    if (request.headTimeout() != null) {
      headTimer = loop.schedule(() -> timedOut(request.headTimeout(), "did not send its answer's head within"),
          request.headTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }
    if (request.wholeTimeout() != null) {
      wholeTimer = loop.schedule(() -> timedOut(request.wholeTimeout(), "did not finish its answer within"),
          request.wholeTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }
    pool.acquire(this, false);
  }

  /** A connection (or HTTP/2 stream) for this exchange: send the request on it. */
  void attach(Channel channel, Consumer<Boolean> lease, boolean reused, String protocol) {
    if (done) {
      lease.accept(true); // nothing was sent on it
      return;
    }
    this.channel = channel;
    this.lease = lease;
    this.reused = reused;
    this.protocolName = protocol;
    this.written = false;
    if (!channel.isActive()) {
      connectionLost(channel, new ClosedChannelException());
      return;
    }
    channel.writeAndFlush(toNetty()).addListener(sent -> {
      if (sent.isSuccess()) {
        if (this.channel == channel) {
          written = true;
        }
      } else {
        connectionLost(channel, sent.cause());
      }
    });
  }


  private FullHttpRequest toNetty() {
    URI uri = request.uri();
    String target = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
    if (uri.getRawQuery() != null) {
      target = target + "?" + uri.getRawQuery();
    }
    byte[] bytes = request.body();
    FullHttpRequest out = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.valueOf(request.method()),
        target, bytes == null ? Unpooled.EMPTY_BUFFER : Unpooled.wrappedBuffer(bytes));
    request.headers().forEach(out.headers()::add);
    out.headers().set(HttpHeaderNames.HOST, origin.authority());
    if (bytes != null) {
      out.headers().set(HttpHeaderNames.CONTENT_LENGTH, bytes.length);
    }
    return out;
  }

  void onMessage(Object msg) {
    try {
      if (done) {
        return;
      }
      if (msg instanceof HttpResponse response) {
        int status = response.status().code();
        if (status >= 100 && status < 200) {
          informational = true;
          return;
        }
        cancel(headTimer);
        keepAlive = HttpUtil.isKeepAlive(response);
        arrived = new UpstreamHead(status, headers(response), protocolName);
      }
      if (msg instanceof HttpContent content) {
        if (informational) {
          informational = !(msg instanceof LastHttpContent);
          return;
        }
        ByteBuf bytes = content.content();
        if (bytes.isReadable() && !body.offer(ByteBufUtil.getBytes(bytes))) {
          channel.config().setAutoRead(false);
          readingStopped = true;
        }
        if (msg instanceof LastHttpContent) {
          finished();
        }
      }
    } finally {
      ReferenceCountUtil.release(msg);
    }
  }

  private static Headers headers(HttpResponse response) {
    Headers.Builder headers = Headers.builder();
    for (Map.Entry<String, String> header : response.headers()) {
      if (!header.getKey().startsWith("x-http2-")) {
        headers.add(header.getKey(), header.getValue());
      }
    }
    return headers.build();
  }

  /**
   * The end of one read from the socket. The head is handed over here rather than as soon as it is
   * parsed, so the waiting thread is woken once, finding whatever else that read brought (a stream's
   * first events); a buffered answer's head waits for the whole body ({@link #finished}), unless
   * the body is too large to wait for.
   */
  void readComplete() {
    if (arrived != null && (request.wholeTimeout() == null || readingStopped)) {
      head.complete(arrived);
    }
  }

  private void finished() {
    done = true;
    cancel(headTimer);
    cancel(wholeTimer);
    // The connection goes back first: a reader that learns of the end may send its next request
    // at once, and finds the connection idle (and its idle time counted from now).
    lease.accept(keepAlive && !cancelled);
    body.end();
    head.complete(arrived);
  }

  /**
   * The connection or stream {@code from} ended or failed before the answer was complete; null
   * when no channel was attached yet (an HTTP/2 stream that could not be opened). News from a
   * channel this exchange has already left (the dead pooled one it was retried away from) is
   * ignored.
   */
  void connectionLost(Channel from, Throwable cause) {
    if (done || (from != null && from != channel)) {
      return;
    }
    if (arrived == null && !written && reused && !retried && !cancelled) {
      // A pooled connection the upstream had closed while it was idle, found before the request
      // went out: once more, on a fresh one. Once the request is out it may be running upstream
      // (and billed), so a failure after that is the router's to judge, never retried here.
      retryElsewhere();
      return;
    }
    fail(arrived != null ? afterHead(io(cause)) : UpstreamFailures.beforeResponse(request.backend(), io(cause)));
  }

  /**
   * The HTTP/2 stream {@code from} was refused by the upstream (REFUSED_STREAM, or above a GOAWAY's
   * last stream): the protocol's word that nothing of it was processed, so it is sent once more,
   * on a connection that can take it. A second refusal fails as the stream's end says.
   */
  void refused(Channel from) {
    if (done || from != channel || arrived != null || retried || cancelled) {
      return;
    }
    retryElsewhere();
  }

  private void retryElsewhere() {
    retried = true;
    // An HTTP/2 stream's connection may be failing as a whole, before its loop has seen it close:
    // the retry takes another connection.
    avoid = channel != null ? channel.parent() : null;
    Consumer<Boolean> dead = lease;
    channel = null;
    lease = null;
    if (dead != null) {
      dead.accept(false);
    }
    pool.acquire(this, true);
  }

  /** No connection could be made (or set up: TLS, ALPN): nothing reached the upstream. */
  void failBeforeResponse(Throwable cause) {
    if (done) {
      return;
    }
    ConnectException refused = new ConnectException(cause.getMessage());
    refused.initCause(cause);
    fail(UpstreamFailures.beforeResponse(request.backend(), refused));
  }

  private UpstreamException afterHead(IOException e) {
    return request.wholeTimeout() == null
        ? UpstreamFailures.midStream(request.backend(), e)
        : UpstreamFailures.midBody(request.backend(), e);
  }

  private void timedOut(Duration limit, String what) {
    fail(new UpstreamException(request.backend(), UpstreamException.Failure.TIMEOUT,
        "The " + request.backend() + " backend " + what + " " + DurationText.format(limit), null));
  }

  private void abort() {
    fail(new UpstreamException(request.backend(), UpstreamException.Failure.RESET_BEFORE_RESPONSE,
        "The call to the " + request.backend() + " backend was cancelled", null));
  }

  private void fail(UpstreamException e) {
    if (done) {
      return;
    }
    done = true;
    cancel(headTimer);
    cancel(wholeTimer);
    if (lease != null) {
      lease.accept(false);
    }
    if (!head.completeExceptionally(e)) {
      body.fail(e);
    }
  }

  private void resumeReading() {
    if (loop.inEventLoop()) {
      resume();
    } else {
      loop.execute(this::resume);
    }
  }

  private void resume() {
    if (!done && channel != null) {
      channel.config().setAutoRead(true);
    }
  }

  private static void cancel(ScheduledFuture<?> timer) {
    if (timer != null) {
      timer.cancel(false);
    }
  }

  private static IOException io(Throwable cause) {
    return cause instanceof IOException e ? e : new IOException(String.valueOf(cause), cause);
  }
}
