package io.spillway.server;

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
import io.netty.util.concurrent.ScheduledFuture;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Via;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.CloseCause;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes responses to one connection. A {@link EventStream#nonBlocking non-blocking} stream is
 * handed to a {@link StreamRelay} on the channel's event loop and the caller returns at once: no
 * thread per stream. A stream that may block (read from an {@code InputStream}, a local server's
 * translated answer) is relayed from a virtual thread (the caller's, or a new one when the answer
 * came on the event loop), event by event as it arrives. Either way, while the
 * client's socket buffer is full the next event is not pulled until it drains, so a slow reader
 * slows the upstream read instead of growing memory.
 *
 * <p>A stream is cut at {@code server.streamTimeLimit} by a timer on the event loop, whether events
 * keep coming, only keep-alive comments arrive, or the writer is waiting for a slow client: the
 * upstream call is cancelled and the client gets a final error event. Closing a stream (on
 * timeout, or when the client goes away) happens on a fresh virtual thread, never on the event
 * loop, because a wrapped stream may settle usage when it closes.
 */
final class ResponseWriter {
  private static final Logger log = LoggerFactory.getLogger(ResponseWriter.class);

  private final Channel channel;
  private final Duration streamTimeLimit;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition writable = lock.newCondition();
  private volatile EventStream activeStream;
  /** The relay of the stream being answered on the event loop; event loop only. */
  private StreamRelay relay;
  private volatile boolean streamExpired;
  private volatile boolean waitingForClient;

  ResponseWriter(Channel channel, Duration streamTimeLimit) {
    this.channel = channel;
    this.streamTimeLimit = streamTimeLimit;
  }

  /**
   * Writes a response from the request's thread. A non-blocking stream is handed to the event loop
   * and this returns at once; a blocking one is relayed here until it ends or the client goes away.
   * {@code written} runs once the answer's last write is issued, on the event
   * loop and in the same task as that write (one wake-up, and nothing the event loop reads
   * afterwards can find the answer still owed); it runs at once when the connection is gone. It
   * does not run when this throws.
   *
   * @param chunked false for a client that cannot read chunked encoding (HTTP/1.0): a stream's body
   *     then ends when the connection closes, so {@code keepAlive} must be false
   */
  void write(
      GatewayResponse response, String requestId, boolean keepAlive, boolean chunked, Runnable written) {
    if (!response.isStream()) {
      finish(buffered(response, requestId, keepAlive, null), keepAlive, written);
      return;
    }
    EventStream stream = response.stream();
    if (stream.nonBlocking()) {
      HttpResponse head = streamHead(response, requestId, keepAlive, chunked);
      StreamRelay handedOver = new StreamRelay(channel, stream, head, requestId, keepAlive, streamTimeLimit, () -> {
        relay = null;
        written.run();
      });
      runOnLoop(() -> relay = handedOver);
      handedOver.start();
      return;
    }
    if (!Blocking.allowedHere()) {
      // Reading this stream blocks, and an answer may arrive on the event loop: relay it from a virtual thread.
      Blocking.virtualThreads().execute(() -> write(response, requestId, keepAlive, chunked, written));
      return;
    }
    activeStream = stream;
    try {
      if (!channel.isActive()) {
        // The client left before the stream was handed over: connectionClosed() did not see it.
        written.run();
        return;
      }
      writeStream(response, stream, requestId, keepAlive, chunked, written);
    } finally {
      activeStream = null;
      CloseCause.close(stream, streamExpired ? CloseCause.STREAM_TIME_LIMIT : CloseCause.CLIENT_CLOSED);
    }
  }

  /**
   * Writes an error answer and ends the connection without losing the answer to a reset (see
   * {@link LingeringClose}); safe on the event loop.
   */
  void writeAndEnd(GatewayResponse response, String requestId, Integer statusOverride) {
    LingeringClose.after(writeBuffered(response, requestId, false, statusOverride, false));
  }

  private ChannelFuture writeBuffered(
      GatewayResponse response, String requestId, boolean keepAlive, Integer statusOverride, boolean closeIfNotKept) {
    ChannelFuture future = channel.writeAndFlush(buffered(response, requestId, keepAlive, statusOverride));
    if (!keepAlive && closeIfNotKept) {
      future.addListener(ChannelFutureListener.CLOSE);
    }
    return future;
  }

  private static FullHttpResponse buffered(
      GatewayResponse response, String requestId, boolean keepAlive, Integer statusOverride) {
    byte[] body = response.body() != null ? response.body() : new byte[0];
    int status = statusOverride != null ? statusOverride : response.status();
    FullHttpResponse out =
        new DefaultFullHttpResponse(
            HttpVersion.HTTP_1_1, status(status), Unpooled.wrappedBuffer(body));
    copyHeaders(response, out.headers(), requestId, keepAlive);
    out.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length);
    return out;
  }

  /** The answer's last write and {@code written}, in one event-loop task. */
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

  private void runOnLoop(Runnable task) {
    try {
      channel.eventLoop().execute(task);
    } catch (RejectedExecutionException e) {
      // Shutting down: the relay finds the loop gone too.
    }
  }

  /** A stream's head: chunked, or delimited by the connection's close for an HTTP/1.0 client. */
  private static HttpResponse streamHead(GatewayResponse response, String requestId, boolean keepAlive, boolean chunked) {
    HttpResponse head =
        new DefaultHttpResponse(HttpVersion.HTTP_1_1, status(response.status()));
    copyHeaders(response, head.headers(), requestId, keepAlive);
    head.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
    if (chunked) {
      head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
    } else {
      head.headers().remove(HttpHeaderNames.TRANSFER_ENCODING).set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    }
    head.headers()
        .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
        .set("x-accel-buffering", "no");
    return head;
  }

  private void writeStream(
      GatewayResponse response, EventStream stream, String requestId, boolean keepAlive, boolean chunked,
      Runnable written) {
    channel.writeAndFlush(streamHead(response, requestId, keepAlive, chunked));
    streamExpired = false;
    ScheduledFuture<?> limit =
        channel.eventLoop().schedule(() -> expire(stream), streamTimeLimit.toNanos(), TimeUnit.NANOSECONDS);
    try {
      SseEvent event;
      while ((event = stream.next()) != null && !streamExpired) {
        if (!awaitWritable()) {
          written.run();
          return;
        }
        channel.writeAndFlush(new DefaultHttpContent(event.wire(Unpooled::wrappedBuffer)));
      }
      if (streamExpired) {
        throw streamTooLong();
      }
    } catch (GatewayException e) {
      endWithError(stream, streamExpired ? streamTooLong() : e);
    } catch (RuntimeException e) {
      if (streamExpired) {
        endWithError(stream, streamTooLong());
      } else {
        log.error("request {}: stream failed unexpectedly", requestId, e);
        endWithError(stream, ErrorMapper.internal("Spillway failed while streaming", requestId));
      }
    } finally {
      limit.cancel(false);
    }
    if (!channel.isActive()) {
      written.run();
      return;
    }
    finish(LastHttpContent.EMPTY_LAST_CONTENT, keepAlive, written);
  }

  private GatewayException streamTooLong() {
    return StreamRelay.streamTooLong(streamTimeLimit);
  }

  /** Ends a failed stream with the error events of its own API. */
  private void endWithError(EventStream stream, GatewayException e) {
    if (channel.isActive()) {
      stream.errorEvents(e).forEach(this::writeEvent);
    }
  }

  /** Runs on the event loop when the stream time limit passes. */
  private void expire(EventStream stream) {
    streamExpired = true;
    closeAside(stream, CloseCause.STREAM_TIME_LIMIT);
    signal();
  }

  private void writeEvent(SseEvent event) {
    channel.writeAndFlush(new DefaultHttpContent(event.wire(Unpooled::wrappedBuffer)));
  }

  /** RFC 5842's 508, which Netty's table lacks; every other code as Netty names it. */
  private static final HttpResponseStatus LOOP_DETECTED = new HttpResponseStatus(508, "Loop Detected");

  private static HttpResponseStatus status(int code) {
    return code == 508 ? LOOP_DETECTED : HttpResponseStatus.valueOf(code);
  }

  private static void copyHeaders(GatewayResponse response, HttpHeaders out, String requestId, boolean keepAlive) {
    response.headers().forEach(out::add);
    out.set("x-request-id", requestId);
    out.set(HttpHeaderNames.VIA, Via.OWN);
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
    waitingForClient = true;
    try {
      while (channel.isActive() && !channel.isWritable() && !streamExpired) {
        writable.await(1, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      waitingForClient = false;
      lock.unlock();
    }
    return channel.isActive();
  }

  /** Whether an answer is stuck because the client does not read it. */
  boolean waitingForClient() {
    StreamRelay current = relay;
    return waitingForClient || (current != null && current.waitingForClient());
  }

  /** Event loop only. */
  void writabilityChanged() {
    StreamRelay current = relay;
    if (current != null) {
      current.writabilityChanged();
    }
    signal();
  }

  /** The client went away: wake a waiting writer and cancel the upstream call of a running stream. */
  void connectionClosed() {
    StreamRelay current = relay;
    if (current != null) {
      current.connectionClosed();
    }
    EventStream stream = activeStream;
    if (stream != null) {
      closeAside(stream, CloseCause.CLIENT_CLOSED);
    }
    signal();
  }

  private static void closeAside(EventStream stream, CloseCause cause) {
    Thread.ofVirtual().name("spillway-stream-close").start(() -> CloseCause.close(stream, cause));
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
