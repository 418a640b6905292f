package io.spillway.server;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.concurrent.ScheduledFuture;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.ErrorMapper;
import io.spillway.core.sse.CloseCause;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Relays one {@link EventStream#nonBlocking non-blocking} stream on its channel's event loop, with
 * no thread of its own: it polls while the client's socket takes more, and stops when it does not
 * ({@link #writabilityChanged} resumes it) or when the stream has nothing yet (the stream's
 * {@link EventStream#onReady} callback resumes it, moved to the loop when it fires elsewhere). A
 * slow client thus stops the polls, and with them the upstream's reads.
 *
 * <p>The end, a failure (framed as the stream's own error events), the {@code server.streamTimeLimit}
 * timer and the client going away each finish it once: the last write and {@code written} in one
 * event-loop task, then the stream is closed on a virtual thread (a wrapper may settle usage when
 * it closes). Events are written as they come and flushed once per run of the loop, so a burst
 * (a cached answer, several events in one upstream read) leaves in one write.
 *
 * <p>Confined to the event loop except {@link #start}, which hands it over.
 */
final class StreamRelay {
  private static final Logger log = LoggerFactory.getLogger(StreamRelay.class);

  private final Channel channel;
  private final EventLoop loop;
  private final EventStream stream;
  private final HttpResponse head;
  private final String requestId;
  private final boolean keepAlive;
  private final Duration streamTimeLimit;
  private final Runnable written;
  private ScheduledFuture<?> limit;
  private boolean done;
  /** Waiting for the client's socket to take more. */
  private boolean paused;
  /**
   * Inside {@link #relay}: a readiness callback or a writability change that comes meanwhile (from
   * inside {@link EventStream#onReady} or a flush) only marks it, and the running loop goes on.
   */
  private boolean relaying;
  private boolean readyAtOnce;

  StreamRelay(Channel channel, EventStream stream, HttpResponse head, String requestId, boolean keepAlive,
      Duration streamTimeLimit, Runnable written) {
    this.channel = channel;
    this.loop = channel.eventLoop();
    this.stream = stream;
    this.head = head;
    this.requestId = requestId;
    this.keepAlive = keepAlive;
    this.streamTimeLimit = streamTimeLimit;
    this.written = written;
  }

  /** Hands the stream to the event loop and returns at once. */
  void start() {
    try {
      loop.execute(this::begin);
    } catch (RejectedExecutionException e) {
      done = true;
      written.run();
      closeAside(CloseCause.CLIENT_CLOSED);
    }
  }

  private void begin() {
    if (done) {
      return; // the client left while the stream was handed over, and connectionClosed() ended it
    }
    if (!channel.isActive()) {
      // The client left before the stream was handed over.
      done = true;
      written.run();
      closeAside(CloseCause.CLIENT_CLOSED);
      return;
    }
    channel.write(head);
    limit = loop.schedule(this::expire, streamTimeLimit.toNanos(), TimeUnit.NANOSECONDS);
    relay();
  }

  /** Polls and writes while the socket takes more and the stream has events. Event loop only. */
  private void relay() {
    if (relaying) {
      return;
    }
    relaying = true;
    try {
      relayWhileYouCan();
    } finally {
      relaying = false;
    }
  }

  private void relayWhileYouCan() {
    while (!done) {
      if (!channel.isWritable()) {
        paused = true;
        channel.flush(); // may drain at once, and clear paused through writabilityChanged
        if (paused) {
          return;
        }
        continue;
      }
      SseEvent event;
      try {
        event = stream.poll();
      } catch (GatewayException e) {
        fail(e);
        return;
      } catch (RuntimeException e) {
        log.error("request {}: stream failed unexpectedly", requestId, e);
        fail(ErrorMapper.internal("Spillway failed while streaming", requestId));
        return;
      } catch (Error e) {
        // Out of memory, say: the stream may be in any state, so the connection ends here.
        log.error("request {}: stream failed with {}", requestId, e.toString());
        abandon();
        return;
      }
      if (event == null) {
        finish(CloseCause.CLIENT_CLOSED);
        return;
      }
      if (event != SseEvent.PENDING) {
        channel.write(content(event));
        continue;
      }
      channel.flush();
      if (!awaitReady()) {
        return;
      }
    }
  }

  /**
   * Asks the stream to say when it has more; true when it already has (the callback fired inside
   * {@link EventStream#onReady}), so the caller polls on instead of recursing.
   */
  private boolean awaitReady() {
    readyAtOnce = false;
    try {
      stream.onReady(this::ready);
    } catch (RuntimeException e) {
      log.error("request {}: stream failed unexpectedly", requestId, e);
      fail(ErrorMapper.internal("Spillway failed while streaming", requestId));
      return false;
    }
    return readyAtOnce;
  }

  /** The stream's readiness callback, on whatever thread had the data. */
  private void ready() {
    if (loop.inEventLoop()) {
      if (relaying) {
        readyAtOnce = true;
      } else {
        relay();
      }
      return;
    }
    try {
      loop.execute(this::relay);
    } catch (RejectedExecutionException e) {
      // The loop is shutting down: the connection goes with it.
    }
  }

  void writabilityChanged() {
    if (paused && !done && channel.isWritable()) {
      paused = false;
      relay();
    }
  }

  /** Whether the answer is stuck because the client does not read it. */
  boolean waitingForClient() {
    return paused && !done;
  }

  /** Ends the connection without the stream's end: the client sees a truncated answer, never a hang. */
  private void abandon() {
    done = true;
    paused = false;
    cancelLimit();
    channel.close();
    written.run();
    closeAside(CloseCause.CLIENT_CLOSED);
  }

  /** The client went away: nothing more is written; the stream is closed aside. */
  void connectionClosed() {
    if (done) {
      return;
    }
    done = true;
    cancelLimit();
    written.run();
    closeAside(CloseCause.CLIENT_CLOSED);
  }

  /** The stream time limit passed: the client gets the limit's error events and the end. */
  private void expire() {
    if (done) {
      return;
    }
    writeErrorEvents(streamTooLong(streamTimeLimit));
    finish(CloseCause.STREAM_TIME_LIMIT);
  }

  private void fail(GatewayException e) {
    writeErrorEvents(e);
    finish(CloseCause.CLIENT_CLOSED);
  }

  private void writeErrorEvents(GatewayException e) {
    for (SseEvent event : stream.errorEvents(e)) {
      channel.write(content(event));
    }
  }

  /** The last write and {@code written}, in this task; then the stream closes aside. */
  private void finish(CloseCause cause) {
    done = true;
    paused = false;
    cancelLimit();
    if (channel.isActive()) {
      ChannelFuture future = channel.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
      if (!keepAlive) {
        future.addListener(ChannelFutureListener.CLOSE);
      }
    }
    written.run();
    closeAside(cause);
  }

  private void cancelLimit() {
    if (limit != null) {
      limit.cancel(false);
    }
  }

  private void closeAside(CloseCause cause) {
    Thread.ofVirtual().name("spillway-stream-close").start(() -> CloseCause.close(stream, cause));
  }

  private static DefaultHttpContent content(SseEvent event) {
    // An upstream event no stage changed leaves as the bytes it came as, without a copy.
    return new DefaultHttpContent(event.wire(Unpooled::wrappedBuffer));
  }

  static GatewayException streamTooLong(Duration streamTimeLimit) {
    return ErrorKind.GATEWAY_TIMEOUT.exception(
        "The stream ran longer than the gateway's limit of " + streamTimeLimit.toSeconds()
            + " s (server.streamTimeLimit) and was cut off").withCode("stream_time_limit");
  }
}
