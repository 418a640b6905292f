package io.spillway.app.observe;

import ch.qos.logback.core.ConsoleAppender;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A console appender whose lines are written by a thread of their own, so that the thread that logs
 * (for the access log, a request's event loop) never waits on stdout: a slow reader of the pipe
 * (a container runtime, journald) would otherwise stall every connection on that loop. The writer
 * waits for a line, then takes every line queued, writes them in one go and flushes; then it lets
 * {@value #LINGER_MICROS} µs pass before it looks again, so that a busy gateway's lines cost one
 * write (and one wake-up of the writer) for many, while a quiet gateway's line appears at once.
 *
 * <p>Nothing is dropped: when {@value #CAPACITY} lines wait already, the logging thread writes its
 * line itself (as a plain console appender would). {@link #stop} writes what is queued; the gateway
 * stops logging (and so this) after its last request has been answered.
 */
public final class QueuedConsoleAppender<E> extends ConsoleAppender<E> {
  static final int CAPACITY = 65_536;
  static final long LINGER_MICROS = 1_000;

  private final BlockingQueue<byte[]> lines = new ArrayBlockingQueue<>(CAPACITY);
  private Thread writer;

  @Override
  public void start() {
    super.start();
    if (!isStarted()) {
      return;
    }
    writer = Thread.ofPlatform().name("spillway-log-writer-" + getName()).daemon().start(this::writeLines);
  }

  @Override
  protected void subAppend(E event) {
    if (!isStarted()) {
      return;
    }
    byte[] line = getEncoder().encode(event);
    if (!lines.offer(line)) {
      write(List.of(line));
    }
  }

  @Override
  public void stop() {
    Thread running = writer;
    if (running != null) {
      running.interrupt();
      try {
        running.join(TimeUnit.SECONDS.toMillis(5));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      writer = null;
    }
    List<byte[]> rest = new ArrayList<>();
    lines.drainTo(rest);
    write(rest);
    super.stop();
  }

  private void writeLines() {
    List<byte[]> batch = new ArrayList<>();
    while (true) {
      try {
        batch.add(lines.take());
      } catch (InterruptedException stopping) {
        return;
      }
      lines.drainTo(batch);
      write(batch);
      batch.clear();
      // Lines logged meanwhile wait for the next look without waking this thread.
      LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(LINGER_MICROS));
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
    }
  }

  /** Writes {@code batch} and flushes, under the lock a plain console appender writes under. */
  private void write(List<byte[]> batch) {
    if (batch.isEmpty()) {
      return;
    }
    streamWriteLock.lock();
    try {
      OutputStream out = getOutputStream();
      for (byte[] line : batch) {
        out.write(line);
      }
      out.flush();
    } catch (IOException e) {
      addError("could not write log lines", e);
    } finally {
      streamWriteLock.unlock();
    }
  }
}
