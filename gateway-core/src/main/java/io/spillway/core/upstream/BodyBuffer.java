package io.spillway.core.upstream;

import java.util.ArrayDeque;

/**
 * A {@link BodySource} the transport fills from its event loop: chunks queue up to a high-water mark
 * of bytes, past which the transport stops reading ({@link #offer} answers false) until the reader
 * has taken the queue down to half of it, when {@code resume} runs (on the reader's thread; the
 * transport hands it to its event loop). Thread-safe between one producer and one reader.
 */
public final class BodyBuffer implements BodySource {
  private final int highWater;
  private final Runnable resume;
  private final Runnable cancel;
  private final ArrayDeque<byte[]> chunks = new ArrayDeque<>(4);
  private int queued;
  private boolean paused;
  private boolean ended;
  private RuntimeException failure;
  private Runnable waiter;
  private boolean closed;

  /**
   * @param resume asks the transport to read again after {@link #offer} answered false
   * @param cancel gives the exchange up (the reader closed the body before its end)
   */
  public BodyBuffer(int highWater, Runnable resume, Runnable cancel) {
    this.highWater = highWater;
    this.resume = resume;
    this.cancel = cancel;
  }

  /**
   * Queues a chunk; false when the queue is full and reading should stop until {@code resume}.
   * The answer is the state after a waiting reader has run: a reader that polls from inside its
   * readiness callback (on the transport's own thread) may already have taken the queue down, and
   * its {@code resume} then ran before the transport could stop reading.
   */
  public boolean offer(byte[] chunk) {
    Runnable ready;
    synchronized (this) {
      if (closed || ended) {
        return false;
      }
      chunks.add(chunk);
      queued += chunk.length;
      // Only the reader's poll ends a pause (and asks the transport to read again): a chunk that
      // arrives while reading is stopped must not end it, or no resume would ever come.
      if (queued >= highWater) {
        paused = true;
      }
      ready = takeWaiter();
    }
    run(ready);
    synchronized (this) {
      return !paused;
    }
  }

  /** The body is complete. */
  public void end() {
    Runnable ready;
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      ready = takeWaiter();
    }
    run(ready);
  }

  /** The body failed with {@code e}, which the reader gets once it has polled what came before. */
  public void fail(RuntimeException e) {
    Runnable ready;
    synchronized (this) {
      if (ended) {
        return;
      }
      ended = true;
      failure = e;
      ready = takeWaiter();
    }
    run(ready);
  }

  @Override
  public byte[] poll() {
    boolean wake;
    byte[] chunk;
    synchronized (this) {
      chunk = chunks.poll();
      if (chunk == null) {
        if (failure != null) {
          throw failure;
        }
        return ended ? null : PENDING;
      }
      queued -= chunk.length;
      wake = paused && queued <= highWater / 2;
      if (wake) {
        paused = false;
      }
    }
    if (wake) {
      resume.run();
    }
    return chunk;
  }

  @Override
  public void onReady(Runnable action) {
    synchronized (this) {
      if (chunks.isEmpty() && !ended) {
        waiter = action;
        return;
      }
    }
    action.run();
  }

  @Override
  public void close() {
    boolean cancelNow;
    synchronized (this) {
      cancelNow = !closed && !(ended && failure == null && chunks.isEmpty());
      closed = true;
      chunks.clear();
      queued = 0;
    }
    if (cancelNow) {
      cancel.run();
    }
  }

  private Runnable takeWaiter() {
    Runnable ready = waiter;
    waiter = null;
    return ready;
  }

  private static void run(Runnable action) {
    if (action != null) {
      action.run();
    }
  }
}
