package io.spillway.local.anthropic;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A local Messages stream that says Anthropic's {@code ping} while nothing else comes: a slow local
 * model may take minutes over a long prompt before its first token, and a thinking model streams
 * thoughts the translation does not pass on, while Claude Code and any proxy in between would give
 * up on a silent connection. Every {@code every}, a timer on the injected scheduler looks whether an
 * event passed since its last look; when none did, the next poll answers a {@code ping} (and the
 * reader waiting on {@link #onReady} is woken for it). So the stream is never silent for more than
 * two intervals.
 *
 * <p>The stream may start before the server's answer has arrived ({@link #awaiting}): it pings until
 * the answer comes, then relays its events; an answer that is an error or a failure ends the stream
 * with that failure, which the endpoint frames as Anthropic's {@code error} event. The timer never
 * blocks and is cancelled at the end or on {@link #close()}. Polled by one reader at a time;
 * thread-safe against the timer and the delegate's callbacks.
 */
final class PingingStream implements EventStream {
  static final SseEvent PING = MessageEvents.event("ping", Json.object());

  private final CompletableFuture<GatewayResponse> answer;
  private final AtomicReference<Runnable> waiting = new AtomicReference<>();
  private final AtomicLong passed = new AtomicLong();
  private final AtomicBoolean pingDue = new AtomicBoolean();
  private final ScheduledFuture<?> timer;
  private volatile EventStream delegate;
  private volatile boolean closed;
  private boolean started;

  private PingingStream(CompletableFuture<GatewayResponse> answer, EventStream delegate, Duration every,
      ScheduledExecutorService scheduler) {
    this.answer = answer;
    this.delegate = delegate;
    long nanos = every.toNanos();
    this.timer = scheduler.scheduleAtFixedRate(new Look(), nanos, nanos, TimeUnit.NANOSECONDS);
  }

  /** Pings between the events of {@code stream} whenever it stays silent. */
  static PingingStream around(EventStream stream, Duration every, ScheduledExecutorService scheduler) {
    return new PingingStream(null, stream, every, scheduler);
  }

  /** Pings until {@code answer} arrives, then relays its stream (and pings in its silences). */
  static PingingStream awaiting(CompletableFuture<GatewayResponse> answer, Duration every,
      ScheduledExecutorService scheduler) {
    PingingStream stream = new PingingStream(answer, null, every, scheduler);
    answer.whenComplete((response, failure) -> stream.wake());
    return stream;
  }

  /** The timer's look: a ping is due when no event passed since the last look. */
  private final class Look implements Runnable {
    private long seen = -1;

    @Override
    public void run() {
      long now = passed.get();
      if (now == seen && !closed) {
        pingDue.set(true);
        wake();
      }
      seen = now;
    }
  }

  @Override
  public SseEvent poll() {
    EventStream events = delegate;
    if (events == null) {
      if (!answer.isDone()) {
        return pingOrPending();
      }
      events = arrived();
    }
    SseEvent event = events.poll();
    if (event == SseEvent.PENDING) {
      return pingOrPending();
    }
    if (event == null) {
      timer.cancel(false);
      return null;
    }
    passed.incrementAndGet();
    started = true;
    return event;
  }

  private SseEvent pingOrPending() {
    if (pingDue.compareAndSet(true, false)) {
      passed.incrementAndGet();
      started = true;
      return PING;
    }
    return SseEvent.PENDING;
  }

  /** The answer's stream, now that it has arrived; its failure or error status is this stream's failure. */
  private EventStream arrived() {
    GatewayResponse response;
    try {
      response = answer.join();
    } catch (RuntimeException e) {
      timer.cancel(false);
      Throwable cause = Blocking.cause(e);
      if (cause instanceof GatewayException failure) {
        throw failure;
      }
      throw new UpstreamException("local", UpstreamException.Failure.INVALID_RESPONSE,
          "The local backend failed before its answer began", cause);
    }
    if (!response.isSuccessful()) {
      timer.cancel(false);
      throw ErrorKind.BAD_GATEWAY.exception("The local backend answered HTTP " + response.status() + ": "
          + message(response.body()));
    }
    EventStream events = response.isStream() ? response.stream() : new ListedEventStream(java.util.List.of());
    delegate = events;
    if (closed) {
      events.close();
    }
    return events;
  }

  private static String message(byte[] body) {
    try {
      JsonNode error = Json.parse(body).path("error");
      return error.isObject() ? error.path("message").asText("no message") : error.asText("no message");
    } catch (IOException | RuntimeException e) {
      return "no message";
    }
  }

  @Override
  public void onReady(Runnable action) {
    waiting.set(action);
    if (pingDue.get() || closed) {
      wake();
      return;
    }
    EventStream events = delegate;
    if (events != null) {
      events.onReady(this::wake);
    } else if (answer.isDone()) {
      wake();
    }
  }

  private void wake() {
    Runnable action = waiting.getAndSet(null);
    if (action != null) {
      action.run();
    }
  }

  @Override
  public boolean nonBlocking() {
    EventStream events = delegate;
    return events == null || events.nonBlocking();
  }

  @Override
  public boolean started() {
    EventStream events = delegate;
    return started || (events != null && events.started());
  }

  /** Stops the timer of a stream that will not be read. */
  void stopPinging() {
    timer.cancel(false);
  }

  @Override
  public void close() {
    closed = true;
    timer.cancel(false);
    EventStream events = delegate;
    if (events != null) {
      events.close();
    } else if (answer != null) {
      // An answer that arrives after the client left still holds its server's connection.
      answer.thenAccept(response -> {
        if (response.isStream()) {
          response.stream().close();
        }
      });
    }
    wake();
  }

  @Override
  public String toString() {
    return "Pinging(" + (delegate != null ? delegate : "awaiting the local answer") + ")";
  }
}
