package io.spillway.core.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.spillway.core.error.UpstreamException;
import io.spillway.core.sse.SseEvent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * An upstream's event stream read from its body as the bytes arrive: events come out whole, the
 * stream must end with its terminal event, and each event must arrive within the per-event timeout
 * counted from when the gateway asks for it (keep-alive comments do not restart the count).
 */
class UpstreamEventStreamTest {
  static final Duration EVENT_TIMEOUT = Duration.ofSeconds(30);

  final FakeExchange exchange = new FakeExchange();
  final AtomicInteger closes = new AtomicInteger();
  final UpstreamEventStream stream = new UpstreamEventStream("cloud", exchange, EVENT_TIMEOUT, closes::incrementAndGet);

  void arrive(String text) {
    exchange.body.offer(text.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void eventsComeOutWholeAsTheirBytesArriveAndTheTerminalOneEndsTheStream() {
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    arrive("data: {\"n\":");
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    arrive("1}\n\ndata: [DONE]\n\n");

    assertThat(stream.poll()).isEqualTo(new SseEvent(null, "{\"n\":1}"));
    assertThat(stream.poll().isDone()).isTrue();
    assertThat(stream.poll()).isNull();
    assertThat(closes).hasValue(1);
    assertThat(stream.started()).isTrue();
  }

  @Test
  void onReadyFiresWhenBytesArrive() {
    AtomicInteger ready = new AtomicInteger();
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    stream.onReady(ready::incrementAndGet);

    arrive("data: {}\n\n");

    assertThat(ready).hasValue(1);
  }

  @Test
  void aStreamThatEndsWithoutItsTerminalEventFails() {
    arrive("data: {\"n\":1}\n\n");
    exchange.body.end();

    assertThat(stream.poll()).isEqualTo(new SseEvent(null, "{\"n\":1}"));
    UpstreamException failure = catchThrowableOfType(UpstreamException.class, stream::poll);
    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.RESET_MID_STREAM);
  }

  @Test
  void keepAliveCommentsDoNotRestartTheEventTimeout() {
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    arrive(": keep-alive\n\n");
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    arrive(": keep-alive\n\n");
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);

    assertThat(exchange.timers).hasSize(1);
    assertThat(exchange.timers.getFirst().delay).isEqualTo(EVENT_TIMEOUT);
    exchange.timers.getFirst().fire();

    assertThat(exchange.cancels).hasValue(1);
    UpstreamException failure = catchThrowableOfType(UpstreamException.class, stream::poll);
    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.TIMEOUT);
  }

  @Test
  void eachWholeEventStartsTheCountForTheNextAfresh() {
    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    arrive("data: {}\n\n");
    assertThat(stream.poll()).isNotNull();
    assertThat(exchange.timers.getFirst().cancelled).isTrue();

    assertThat(stream.poll()).isSameAs(SseEvent.PENDING);
    assertThat(exchange.timers).hasSize(2);
    assertThat(exchange.timers.get(1).cancelled).isFalse();
  }

  @Test
  void anEventThatIsNotAJsonObjectFailsAndCancelsTheExchange() {
    arrive("data: not json\n\n");

    UpstreamException failure = catchThrowableOfType(UpstreamException.class, stream::poll);

    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.INVALID_RESPONSE);
    assertThat(exchange.cancels).hasValue(1);
  }

  @Test
  void anAnswerThatIsNotEventsFails() {
    arrive("<html><body>bad gateway</body></html>\n");

    UpstreamException failure = catchThrowableOfType(UpstreamException.class, stream::poll);

    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.INVALID_RESPONSE);
  }

  @Test
  void closingMidStreamCancelsTheExchangeAndRunsOnCloseOnce() {
    arrive("data: {}\n\n");
    stream.poll();

    stream.close();
    stream.close();

    assertThat(exchange.cancels).hasValue(1);
    assertThat(closes).hasValue(1);
    assertThat(stream.poll()).isNull();
  }

  /** An exchange whose body the test fills and whose timers the test fires. */
  static final class FakeExchange implements UpstreamExchange {
    final AtomicInteger cancels = new AtomicInteger();
    final BodyBuffer body = new BodyBuffer(1 << 20, () -> {}, this::cancel);
    final List<Timer> timers = new ArrayList<>();

    @Override
    public CompletableFuture<UpstreamHead> head() {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public BodySource body() {
      return body;
    }

    @Override
    public void cancel() {
      cancels.incrementAndGet();
      body.fail(new UpstreamException("cloud", UpstreamException.Failure.RESET_BEFORE_RESPONSE, "cancelled", null));
    }

    @Override
    public Runnable schedule(Duration delay, Runnable action) {
      Timer timer = new Timer(delay, action);
      timers.add(timer);
      return () -> timer.cancelled = true;
    }
  }

  static final class Timer {
    final Duration delay;
    final Runnable action;
    boolean cancelled;

    Timer(Duration delay, Runnable action) {
      this.delay = delay;
      this.action = action;
    }

    void fire() {
      if (!cancelled) {
        action.run();
      }
    }
  }
}
