package io.spillway.local.ollama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.upstream.BodyBuffer;
import io.spillway.core.upstream.BodySource;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHead;
import io.spillway.local.UpstreamObjects;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Ollama's NDJSON read from a polled body: lines across chunks, never blocking, a limit per line. */
class NdjsonLinesTest {
  /** An exchange whose body the test fills, and whose timers the test runs. */
  static final class FedExchange implements UpstreamExchange {
    final BodyBuffer body = new BodyBuffer(1 << 20, () -> {}, this::cancel);
    final List<Runnable> timers = new ArrayList<>();
    int armed;
    boolean cancelled;

    @Override
    public CompletableFuture<UpstreamHead> head() {
      return new CompletableFuture<>();
    }

    @Override
    public BodySource body() {
      return body;
    }

    @Override
    public void cancel() {
      cancelled = true;
      body.fail(new UpstreamException("local", UpstreamException.Failure.RESET_BEFORE_RESPONSE, "cancelled", null));
    }

    @Override
    public Runnable schedule(Duration delay, Runnable action) {
      armed++;
      timers.add(action);
      return () -> timers.remove(action);
    }

    void send(String text) {
      body.offer(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Runs the timers that are still armed, as if their time had passed. */
    void timePasses() {
      List.copyOf(timers).forEach(Runnable::run);
    }
  }

  final FedExchange exchange = new FedExchange();
  final NdjsonLines lines = new NdjsonLines("local", exchange, 64, Duration.ofSeconds(5));

  @Test
  void aLineSplitAcrossChunksIsGivenWholeAndAPollWithoutOneAnswersPending() {
    exchange.send("{\"message\":{\"content\":\"He");

    assertThat(lines.poll()).isSameAs(UpstreamObjects.PENDING);
    List<String> told = new ArrayList<>();
    lines.onReady(() -> told.add("ready"));
    exchange.send("llo\"},\"done\":false}\n{\"done\":true}\n");

    assertThat(told).containsExactly("ready");
    assertThat(lines.poll().path("message").path("content").asText()).isEqualTo("Hello");
    JsonNode last = lines.poll();
    assertThat(last.path("done").asBoolean()).isTrue();
    assertThat(lines.finished()).isTrue();
    assertThat(lines.poll()).isNull();
  }

  @Test
  void blankLinesAreSkippedAndALastLineWithoutNewlineCounts() {
    exchange.send("\n\r\n{\"a\":1}\n  \n{\"done\":true}");
    exchange.body.end();

    assertThat(lines.poll().path("a").asInt()).isEqualTo(1);
    assertThat(lines.poll().path("done").asBoolean()).isTrue();
  }

  @Test
  void aLineLongerThanTheLimitFailsEvenBeforeItsEndArrives() {
    exchange.send("{\"content\":\"" + "x".repeat(80));

    assertThatThrownBy(lines::poll).isInstanceOfSatisfying(UpstreamException.class, e -> {
      assertThat(e.failure()).isEqualTo(UpstreamException.Failure.INVALID_RESPONSE);
      assertThat(e.getMessage()).isEqualTo("The local backend sent a line longer than 64 bytes");
    });
    assertThat(exchange.cancelled).isTrue();
  }

  @Test
  void aLineThatIsNotAJsonObjectFails() {
    exchange.send("[1,2]\n");

    assertThatThrownBy(lines::poll).isInstanceOfSatisfying(UpstreamException.class,
        e -> assertThat(e.getMessage()).isEqualTo("The local backend sent a line that is not a JSON object"));
  }

  @Test
  void eachLineHasItsOwnTimeFromThePollThatFoundNoneAndPastItTheCallIsCancelled() {
    assertThat(lines.poll()).isSameAs(UpstreamObjects.PENDING);
    assertThat(lines.poll()).isSameAs(UpstreamObjects.PENDING);
    assertThat(exchange.armed).as("one timer per line, not per poll").isEqualTo(1);
    exchange.send("{\"a\":1}\n");
    assertThat(lines.poll().path("a").asInt()).isEqualTo(1);
    assertThat(exchange.timers).as("disarmed once the line came").isEmpty();

    assertThat(lines.poll()).isSameAs(UpstreamObjects.PENDING);
    exchange.timePasses();

    assertThat(exchange.cancelled).isTrue();
    assertThatThrownBy(lines::poll).isInstanceOfSatisfying(UpstreamException.class, e -> {
      assertThat(e.failure()).isEqualTo(UpstreamException.Failure.TIMEOUT);
      assertThat(e.getMessage()).isEqualTo("The local backend (Ollama) sent no whole line within 5s");
    });
  }

  @Test
  void closingBeforeTheDoneLineCancelsTheCall() {
    exchange.send("{\"a\":1}\n");
    lines.poll();

    lines.close();

    assertThat(exchange.cancelled).isTrue();
  }
}
