package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EndingEventStreamTest {
  final List<String> endings = new ArrayList<>();

  EndingEventStream watching(EventStream stream) {
    return new EndingEventStream(stream) {
      @Override
      protected void ended(RuntimeException failure) {
        endings.add(failure == null ? "completed" : "failed: " + failure.getMessage());
      }
    };
  }

  @Test
  void readingTheLastEventEndsItOnceEvenWhenClosedAfterwards() {
    EndingEventStream stream = watching(new ListedEventStream(List.of(SseEvent.data("a"), SseEvent.DONE)));

    assertThat(stream.next()).isEqualTo(SseEvent.data("a"));
    assertThat(endings).isEmpty();
    assertThat(stream.next()).isEqualTo(SseEvent.DONE);
    assertThat(stream.next()).isNull();
    stream.close();

    assertThat(endings).containsExactly("completed");
  }

  @Test
  void aFailedReadEndsItWithTheFailure() {
    EndingEventStream stream = watching(new EventStream() {
      @Override
      public SseEvent poll() {
        throw new IllegalStateException("upstream went away");
      }

      @Override
      public void close() {}

      @Override
      public boolean started() {
        return false;
      }
    });

    assertThatThrownBy(stream::next).hasMessage("upstream went away");
    stream.close();

    assertThat(endings).containsExactly("failed: upstream went away");
  }

  @Test
  void closingBeforeTheEndEndsItWithoutAFailure() {
    EndingEventStream stream = watching(new ListedEventStream(List.of(SseEvent.data("a"), SseEvent.DONE)));

    stream.next();
    stream.close();

    assertThat(endings).containsExactly("completed");
  }
}
