package io.spillway.local.anthropic;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ListedEventStream;
import io.spillway.core.sse.SseEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link PingingStream} on a hand-driven scheduler: time passes only when the test says so, and
 * every timer due by then runs on the test's thread.
 */
class PingingStreamTest {
  private static final Duration EVERY = Duration.ofSeconds(10);
  private static final SseEvent DELTA = MessageEvents.event("content_block_delta", io.spillway.core.json.Json.object());

  private final ManualScheduler scheduler = new ManualScheduler();

  @Test
  void aSilentStreamPingsWithinTwoIntervalsAndWakesItsReader() {
    QueuedStream source = new QueuedStream();
    PingingStream stream = PingingStream.around(source, EVERY, scheduler);
    AtomicInteger woken = new AtomicInteger();

    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    stream.onReady(woken::incrementAndGet);
    scheduler.advance(EVERY);
    assertThat(woken).as("one look sees no silence yet").hasValue(0);
    scheduler.advance(EVERY);

    assertThat(woken).hasValue(1);
    assertThat(stream.poll()).isSameAs(PingingStream.PING);
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
  }

  @Test
  void eventsThatKeepFlowingAreNeverInterruptedByPings() {
    QueuedStream source = new QueuedStream();
    PingingStream stream = PingingStream.around(source, EVERY, scheduler);

    for (int i = 0; i < 5; i++) {
      source.push(DELTA);
      assertThat(stream.poll()).isSameAs(DELTA);
      scheduler.advance(EVERY);
    }

    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    source.end();
    assertThat(stream.poll()).isNull();
    assertThat(scheduler.live()).as("the timer ends with the stream").isZero();
  }

  @Test
  void anEarlyStreamPingsUntilTheAnswerArrivesThenRelaysIt() {
    CompletableFuture<GatewayResponse> answer = new CompletableFuture<>();
    PingingStream stream = PingingStream.awaiting(answer, EVERY, scheduler);
    AtomicInteger woken = new AtomicInteger();

    scheduler.advance(EVERY.multipliedBy(2));
    assertThat(stream.poll()).isSameAs(PingingStream.PING);
    stream.onReady(woken::incrementAndGet);
    answer.complete(GatewayResponse.streamed(200, Headers.EMPTY, new ListedEventStream(List.of(DELTA))));

    assertThat(woken).as("the answer wakes the reader").hasValue(1);
    assertThat(stream.poll()).isSameAs(DELTA);
    assertThat(stream.poll()).isNull();
  }

  @Test
  void anErrorAnswerAfterTheEarlyStartFailsTheStream() {
    CompletableFuture<GatewayResponse> answer = new CompletableFuture<>();
    PingingStream stream = PingingStream.awaiting(answer, EVERY, scheduler);
    scheduler.advance(EVERY.multipliedBy(2));
    assertThat(stream.poll()).isSameAs(PingingStream.PING);

    answer.complete(GatewayResponse.buffered(500, Headers.EMPTY,
        "{\"error\":{\"message\":\"model failed to load\"}}".getBytes(StandardCharsets.UTF_8)));

    assertThatThrownBy(stream::poll).isInstanceOf(GatewayException.class).hasMessageContaining("model failed to load");
    assertThat(scheduler.live()).isZero();
  }

  @Test
  void closingStopsTheTimerAndClosesAnAnswerThatArrivesLater() {
    CompletableFuture<GatewayResponse> answer = new CompletableFuture<>();
    PingingStream stream = PingingStream.awaiting(answer, EVERY, scheduler);
    QueuedStream late = new QueuedStream();

    stream.close();
    answer.complete(GatewayResponse.streamed(200, Headers.EMPTY, late));

    assertThat(scheduler.live()).isZero();
    assertThat(late.closed).isTrue();
  }

  /** A stream fed by the test: PENDING while empty, its reader woken by each push. */
  private static final class QueuedStream implements EventStream {
    private final Deque<SseEvent> events = new ArrayDeque<>();
    private Runnable ready;
    private boolean ended;
    boolean closed;

    void push(SseEvent event) {
      events.add(event);
      wake();
    }

    void end() {
      ended = true;
      wake();
    }

    private void wake() {
      Runnable action = ready;
      ready = null;
      if (action != null) {
        action.run();
      }
    }

    @Override
    public SseEvent poll() {
      if (!events.isEmpty()) {
        return events.poll();
      }
      return ended ? null : SseEvent.PENDING;
    }

    @Override
    public void onReady(Runnable action) {
      ready = action;
    }

    @Override
    public boolean nonBlocking() {
      return true;
    }

    @Override
    public boolean started() {
      return false;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  /** A scheduler whose clock moves only by {@link #advance}; due tasks run on the caller's thread. */
  private static final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
    private final List<Task> tasks = new ArrayList<>();
    private long now;

    void advance(Duration by) {
      long until = now + by.toNanos();
      while (true) {
        Task next = tasks.stream().filter(t -> !t.cancelled && t.due <= until)
            .min((a, b) -> Long.compare(a.due, b.due)).orElse(null);
        if (next == null) {
          break;
        }
        now = next.due;
        if (next.period > 0) {
          next.due += next.period;
        } else {
          tasks.remove(next);
        }
        next.action.run();
      }
      now = until;
    }

    long live() {
      return tasks.stream().filter(t -> !t.cancelled).count();
    }

    private Task add(Runnable action, long delayNanos, long periodNanos) {
      Task task = new Task(action, now + delayNanos, periodNanos);
      tasks.add(task);
      return task;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      return add(command, unit.toNanos(delay), 0);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
      throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
      return add(command, unit.toNanos(initialDelay), unit.toNanos(period));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
      return add(command, unit.toNanos(initialDelay), unit.toNanos(delay));
    }

    @Override
    public void shutdown() {}

    @Override
    public List<Runnable> shutdownNow() {
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return true;
    }

    @Override
    public void execute(Runnable command) {
      command.run();
    }

    private final class Task implements ScheduledFuture<Object> {
      final Runnable action;
      final long period;
      long due;
      boolean cancelled;

      Task(Runnable action, long due, long period) {
        this.action = action;
        this.due = due;
        this.period = period;
      }

      @Override
      public long getDelay(TimeUnit unit) {
        return unit.convert(due - now, TimeUnit.NANOSECONDS);
      }

      @Override
      public int compareTo(Delayed other) {
        return Long.compare(getDelay(TimeUnit.NANOSECONDS), other.getDelay(TimeUnit.NANOSECONDS));
      }

      @Override
      public boolean cancel(boolean mayInterruptIfRunning) {
        cancelled = true;
        tasks.remove(this);
        return true;
      }

      @Override
      public boolean isCancelled() {
        return cancelled;
      }

      @Override
      public boolean isDone() {
        return cancelled;
      }

      @Override
      public Object get() {
        return null;
      }

      @Override
      public Object get(long timeout, TimeUnit unit) {
        return null;
      }
    }

    @Override
    public <T> List<java.util.concurrent.Future<T>> invokeAll(Collection<? extends Callable<T>> tasks) {
      throw new UnsupportedOperationException();
    }
  }
}
