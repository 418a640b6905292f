package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.spillway.core.error.UpstreamException;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Keep-alive comments keep a connection busy but are not events: they do not reset the silence limit. */
class InputStreamEventStreamTest {
  private final AtomicLong nanos = new AtomicLong();

  /** An endless body that advances the fake ticker by one second for every line it hands out. */
  private InputStream endless(String firstLines, String repeatedLine) {
    Iterator<InputStream> lines = Stream.concat(
            Stream.of(new ByteArrayInputStream(firstLines.getBytes(StandardCharsets.UTF_8))),
            Stream.generate(() -> {
              nanos.addAndGet(Duration.ofSeconds(1).toNanos());
              return (InputStream) new ByteArrayInputStream(repeatedLine.getBytes(StandardCharsets.UTF_8));
            }))
        .iterator();
    return new SequenceInputStream(new java.util.Enumeration<>() {
      @Override
      public boolean hasMoreElements() {
        return lines.hasNext();
      }

      @Override
      public InputStream nextElement() {
        return lines.next();
      }
    });
  }

  @Test
  void onlyKeepAliveCommentsFailAsATimeoutOnceTheSilenceLimitPasses() {
    InputStreamEventStream stream = new InputStreamEventStream(
        "cloud", endless("", ": keep-alive\n\n"), () -> {}, Duration.ofSeconds(5), nanos::get);

    assertThatThrownBy(stream::next)
        .isInstanceOfSatisfying(UpstreamException.class,
            e -> assertThat(e.failure()).isEqualTo(UpstreamException.Failure.TIMEOUT))
        .hasMessageContaining("no event for 5 s");
    assertThat(nanos.get()).isBetween(Duration.ofSeconds(5).toNanos(), Duration.ofSeconds(8).toNanos());
  }

  @Test
  void eventsResetTheSilenceClockAndCommentsAfterThemStillCount() {
    InputStreamEventStream stream = new InputStreamEventStream(
        "cloud", endless("data: {\"n\":1}\n\n", ": ping\n"), () -> {}, Duration.ofSeconds(5), nanos::get);

    assertThat(stream.next().data()).isEqualTo("{\"n\":1}");
    assertThat(stream.started()).isTrue();
    assertThatThrownBy(stream::next).isInstanceOf(UpstreamException.class);
  }

  @Test
  void withoutALimitCommentsAreSkippedUntilTheNextEvent() {
    String body = ": a\n: b\n\n: c\ndata: [DONE]\n\n";
    InputStreamEventStream stream = new InputStreamEventStream(
        "cloud", new ByteArrayInputStream(body.getBytes(StandardCharsets.UTF_8)), () -> {});

    assertThat(stream.next().isDone()).isTrue();
    assertThat(stream.next()).isNull();
  }
}
