package io.spillway.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The time to one whole event keeps running across polls that find nothing yet. */
class TimedEventStreamTest {

  @Test
  void anEventThatNeverComesTimesOutAPolledStream() throws Exception {
    WaitingStream upstream = new WaitingStream();
    TimedEventStream stream = new TimedEventStream("cloud", upstream, Duration.ofMillis(200));

    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    assertThat(stream.poll()).as("a second poll does not restart the clock").isSameAs(SseEvent.PENDING);
    CountDownLatch ready = new CountDownLatch(1);
    stream.onReady(ready::countDown);

    assertThat(ready.await(5, TimeUnit.SECONDS)).as("the limit closes the upstream, which says so").isTrue();
    assertThatThrownBy(stream::poll).isInstanceOfSatisfying(UpstreamException.class,
        e -> assertThat(e.failure()).isEqualTo(UpstreamException.Failure.TIMEOUT));
  }

  @Test
  void anEventThatComesInTimeAfterAPendingPollPasses() {
    WaitingStream upstream = new WaitingStream();
    TimedEventStream stream = new TimedEventStream("cloud", upstream, Duration.ofSeconds(30));

    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    upstream.offer(SseEvent.data("{\"n\":1}"));

    assertThat(stream.nonBlocking()).isTrue();
    assertThat(stream.poll()).isEqualTo(SseEvent.data("{\"n\":1}"));
    assertThat(upstream.closed).isFalse();
  }

  /** A non-blocking upstream with at most one event waiting; closing it ends it. */
  private static final class WaitingStream implements EventStream {
    private final AtomicReference<SseEvent> next = new AtomicReference<>();
    private final AtomicReference<Runnable> waiting = new AtomicReference<>();
    private volatile boolean closed;

    void offer(SseEvent event) {
      next.set(event);
      wake();
    }

    private void wake() {
      Runnable action = waiting.getAndSet(null);
      if (action != null) {
        action.run();
      }
    }

    @Override
    public SseEvent poll() {
      if (closed) {
        return null;
      }
      SseEvent event = next.getAndSet(null);
      return event != null ? event : SseEvent.PENDING;
    }

    @Override
    public void onReady(Runnable action) {
      waiting.set(action);
      if (closed || next.get() != null) {
        wake();
      }
    }

    @Override
    public boolean nonBlocking() {
      return true;
    }

    @Override
    public void close() {
      closed = true;
      wake();
    }

    @Override
    public boolean started() {
      return false;
    }
  }
}
