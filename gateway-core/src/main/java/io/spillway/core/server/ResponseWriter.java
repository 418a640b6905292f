package io.spillway.core.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.sse.StreamErrors;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes responses to one connection from the request's virtual thread. A stream is relayed event
 * by event as it arrives; while the client's socket buffer is full the writer waits for it to drain
 * before pulling the next event, so a slow reader slows the upstream read instead of growing memory.
 */
final class ResponseWriter {
  private static final Logger log = LoggerFactory.getLogger(ResponseWriter.class);

  private final Channel channel;
  private final Duration streamTimeLimit;
  private final Clock clock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition writable = lock.newCondition();
  private volatile EventStream activeStream;

  ResponseWriter(Channel channel, Duration streamTimeLimit, Clock clock) {
    this.channel = channel;
    this.streamTimeLimit = streamTimeLimit;
    this.clock = clock;
  }

  /**
   * Writes a response from the request's thread; blocks for streams until the stream ends or the
   * client goes away. {@code written} runs once the answer's last write is issued, on the event
   * loop and in the same task as that write, so nothing the event loop reads afterwards can find
   * the answer still owed; it runs at once when the connection is already gone.
   */
  void write(GatewayResponse response, String requestId, boolean keepAlive, String path, Runnable written) {
    if (!response.isStream()) {
      finish(buffered(response, requestId, keepAlive, null), keepAlive, written);
      return;
    }
    EventStream stream = response.stream();
    activeStream = stream;
    try {
      writeStream(response, stream, requestId, keepAlive, path, written);
    } finally {
      activeStream = null;
      stream.close();
    }
  }

  /** Writes a buffered response without blocking; on the event loop. */
  void writeDetached(GatewayResponse response, String requestId, boolean keepAlive, Integer statusOverride) {
    ChannelFuture future = channel.writeAndFlush(buffered(response, requestId, keepAlive, statusOverride));
    if (!keepAlive) {
      future.addListener(ChannelFutureListener.CLOSE);
    }
  }

  private static FullHttpResponse buffered(
      GatewayResponse response, String requestId, boolean keepAlive, Integer statusOverride) {
    byte[] body = response.body() != null ? response.body() : new byte[0];
    int status = statusOverride != null ? statusOverride : response.status();
    FullHttpResponse out =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(status), Unpooled.wrappedBuffer(body));
    copyHeaders(response, out.headers(), requestId, keepAlive);
    out.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length);
    return out;
  }

  /** The answer's last write and {@code written}, in one event-loop task (one wake-up). */
  private void finish(Object last, boolean keepAlive, Runnable written) {
    Runnable task = () -> {
      ChannelFuture future = channel.writeAndFlush(last);
      if (!keepAlive) {
        future.addListener(ChannelFutureListener.CLOSE);
      }
      written.run();
    };
    EventLoop loop = channel.eventLoop();
    if (loop.inEventLoop()) {
      task.run();
      return;
    }
    try {
      loop.execute(task);
    } catch (RejectedExecutionException e) {
      ReferenceCountUtil.release(last);
      written.run();
    }
  }

  private void writeStream(
      GatewayResponse response, EventStream stream, String requestId, boolean keepAlive, String path,
      Runnable written) {
    HttpResponse head =
        new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.valueOf(response.status()));
    copyHeaders(response, head.headers(), requestId, keepAlive);
    head.headers()
        .set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED)
        .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
        .set("x-accel-buffering", "no");
    channel.writeAndFlush(head);
    Instant deadline = clock.instant().plus(streamTimeLimit);
    boolean responses = "/v1/responses".equals(path);
    try {
      SseEvent event;
      while ((event = stream.next()) != null) {
        if (!awaitWritable()) {
          written.run();
          return;
        }
        channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event.encode())));
        if (clock.instant().isAfter(deadline)) {
          throw GatewayException.of(ErrorKind.GATEWAY_TIMEOUT,
              "Stream ran longer than the gateway's limit (server.streamTimeLimit " + streamTimeLimit + ")", null);
        }
      }
    } catch (GatewayException e) {
      if (channel.isActive()) {
        writeEvent(StreamErrors.errorEvent(e, responses));
        if (!responses) {
          writeEvent(SseEvent.DONE);
        }
      }
    } catch (RuntimeException e) {
      log.error("request {}: stream failed unexpectedly", requestId, e);
      if (channel.isActive()) {
        writeEvent(StreamErrors.errorEvent(
            GatewayException.of(ErrorKind.INTERNAL, "Spillway failed while streaming; see its log for " + requestId, null),
            responses));
      }
    }
    if (!channel.isActive()) {
      written.run();
      return;
    }
    finish(LastHttpContent.EMPTY_LAST_CONTENT, keepAlive, written);
  }

  private void writeEvent(SseEvent event) {
    channel.writeAndFlush(new DefaultHttpContent(Unpooled.wrappedBuffer(event.encode())));
  }

  private static void copyHeaders(GatewayResponse response, HttpHeaders out, String requestId, boolean keepAlive) {
    response.headers().forEach(out::add);
    out.set("x-request-id", requestId);
    if (!keepAlive) {
      out.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
  }

  /** Waits until the channel can take more; false when the client went away. */
  private boolean awaitWritable() {
    if (channel.isWritable()) {
      return true;
    }
    lock.lock();
    try {
      while (channel.isActive() && !channel.isWritable()) {
        writable.await(1, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
    return channel.isActive();
  }

  void writabilityChanged() {
    signal();
  }

  /** The client went away: wake a waiting writer and cancel the upstream call of a running stream. */
  void connectionClosed() {
    EventStream stream = activeStream;
    if (stream != null) {
      stream.close();
    }
    signal();
  }

  private void signal() {
    lock.lock();
    try {
      writable.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
