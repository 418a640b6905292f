package io.spillway.core.sse;

import java.util.concurrent.CancellationException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Blocks the calling (virtual) thread until a non-blocking source says it is ready: the bridge from
 * a polled source ({@link EventStream#poll}, a body's poll) to code that reads by blocking.
 */
public final class ReadyWait {
  private ReadyWait() {}

  /**
   * Registers a wake-up with {@code onReady} and parks until it runs.
   *
   * @throws CancellationException when the thread is interrupted meanwhile
   */
  public static void await(Consumer<Runnable> onReady) {
    Thread reader = Thread.currentThread();
    AtomicBoolean ready = new AtomicBoolean();
    onReady.accept(() -> {
      ready.set(true);
      LockSupport.unpark(reader);
    });
    while (!ready.get()) {
      LockSupport.park(onReady);
      if (reader.isInterrupted() && !ready.get()) {
        throw new CancellationException("interrupted while waiting for the upstream");
      }
    }
  }
}
