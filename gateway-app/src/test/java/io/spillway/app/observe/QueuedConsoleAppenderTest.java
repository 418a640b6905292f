package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The access log's appender: lines leave in order, from its own thread, and none is lost at stop. */
class QueuedConsoleAppenderTest {
  private final LoggerContext context = new LoggerContext();
  private final QueuedConsoleAppender<ILoggingEvent> appender = new QueuedConsoleAppender<>();
  private final Recording out = new Recording();

  /** What was written, and by which threads; a write may be held until {@link #release}. */
  private static final class Recording extends OutputStream {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final Set<String> writers = ConcurrentHashMap.newKeySet();
    final CountDownLatch open = new CountDownLatch(1);
    volatile boolean held;

    @Override
    public synchronized void write(int b) {
      bytes.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      writers.add(Thread.currentThread().getName());
      if (held) {
        try {
          open.await(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      synchronized (this) {
        bytes.write(b, off, len);
      }
    }

    synchronized String text() {
      return bytes.toString(StandardCharsets.UTF_8);
    }

    void release() {
      held = false;
      open.countDown();
    }
  }

  private void start() {
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(DefaultLogging.ACCESS_PATTERN);
    encoder.start();
    appender.setContext(context);
    appender.setName("ACCESS");
    appender.setEncoder(encoder);
    appender.start();
    appender.setOutputStream(out);
  }

  private LoggingEvent line(int i) {
    Logger logger = context.getLogger("spillway.access");
    return new LoggingEvent(Logger.class.getName(), logger, Level.INFO, "line " + i, null, null);
  }

  @AfterEach
  void stop() {
    out.release();
    appender.stop();
  }

  @Test
  void everyLineLeavesInOrderFromTheWritersThreadNotTheLoggingOne() {
    start();

    for (int i = 0; i < 1_000; i++) {
      appender.doAppend(line(i));
    }

    await().atMost(Duration.ofSeconds(10)).until(() -> out.text().contains("line 999\n"));
    String[] lines = out.text().split("\n");
    assertThat(lines).hasSize(1_000);
    for (int i = 0; i < 1_000; i++) {
      assertThat(lines[i]).isEqualTo("line " + i);
    }
    assertThat(out.writers).allSatisfy(name -> assertThat(name).startsWith("spillway-log-writer-ACCESS"));
  }

  @Test
  void aSlowReaderDoesNotHoldTheLoggingThread() {
    start();
    out.held = true;

    for (int i = 0; i < 100; i++) {
      appender.doAppend(line(i)); // returns although nothing can be written now
    }

    assertThat(out.text()).isEmpty();
    out.release();
    await().atMost(Duration.ofSeconds(10)).until(() -> out.text().contains("line 99\n"));
  }

  @Test
  void stoppingWritesWhatIsStillQueued() {
    start();
    out.held = true;
    for (int i = 0; i < 100; i++) {
      appender.doAppend(line(i));
    }

    out.release();
    appender.stop();

    assertThat(out.text().split("\n")).hasSize(100).endsWith("line 99");
  }
}
