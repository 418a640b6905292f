package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The stream protocol: a poll that finds nothing, the readiness callback, and the blocking read on top. */
class EventStreamProtocolTest {

  @Test
  void theBlockingReadWaitsForReadinessAfterAPendingPoll() {
    LateStream stream = new LateStream(SseEvent.data("{\"n\":1}"));

    assertThat(stream.next()).isEqualTo(SseEvent.data("{\"n\":1}"));
    assertThat(stream.next()).isNull();
    assertThat(stream.readyCallbacks).hasValue(1);
  }

  @Test
  void aForwardingStreamForwardsReadinessAndWhetherItBlocks() {
    LateStream source = new LateStream(SseEvent.DONE);
    ForwardingEventStream wrapper = new ForwardingEventStream(source) {};

    assertThat(wrapper.nonBlocking()).isTrue();
    assertThat(wrapper.poll()).isSameAs(SseEvent.PENDING);
    assertThat(wrapper.next()).isEqualTo(SseEvent.DONE);
    assertThat(source.readyCallbacks).hasValue(1);
  }

  @Test
  void anEndingStreamDoesNotTakeAPendingPollForTheEnd() {
    AtomicInteger ended = new AtomicInteger();
    EndingEventStream stream = new EndingEventStream(new LateStream(SseEvent.DONE)) {
      @Override
      protected void ended(RuntimeException failure) {
        ended.incrementAndGet();
      }
    };

    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    assertThat(ended).hasValue(0);
    assertThat(stream.next()).isEqualTo(SseEvent.DONE);
    assertThat(stream.next()).isNull();
    assertThat(ended).hasValue(1);
  }

  @Test
  void eventsAtHandNeverBlockNorWait() {
    ListedEventStream stream = new ListedEventStream(List.of(SseEvent.data("{}"), SseEvent.DONE));

    assertThat(stream.nonBlocking()).isTrue();
    assertThat(stream.poll()).isEqualTo(SseEvent.data("{}"));
    assertThat(stream.poll()).isEqualTo(SseEvent.DONE);
    assertThat(stream.poll()).isNull();
  }

  /**
   * A stream whose one event arrives on another thread only once a reader asks to be told: its
   * first poll always finds nothing.
   */
  private static final class LateStream implements EventStream {
    private final SseEvent event;
    private final AtomicReference<SseEvent> arrived = new AtomicReference<>();
    private final AtomicInteger readyCallbacks = new AtomicInteger();
    private volatile boolean handedOut;

    LateStream(SseEvent event) {
      this.event = event;
    }

    @Override
    public SseEvent poll() {
      if (handedOut) {
        return null;
      }
      SseEvent now = arrived.getAndSet(null);
      if (now == null) {
        return SseEvent.PENDING;
      }
      handedOut = true;
      return now;
    }

    @Override
    public void onReady(Runnable action) {
      readyCallbacks.incrementAndGet();
      Thread.ofPlatform().start(() -> {
        arrived.set(event);
        action.run();
      });
    }

    @Override
    public boolean nonBlocking() {
      return true;
    }

    @Override
    public void close() {}

    @Override
    public boolean started() {
      return handedOut;
    }
  }
}
