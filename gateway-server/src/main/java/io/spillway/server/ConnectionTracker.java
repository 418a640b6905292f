package io.spillway.server;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** Counts open connections and in-flight requests; lets a graceful stop wait for the latter. */
final class ConnectionTracker {
  private final int maxConnections;
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger inFlight = new AtomicInteger();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition idle = lock.newCondition();
  private volatile boolean draining;

  ConnectionTracker(int maxConnections) {
    this.maxConnections = maxConnections;
  }

  /** Counts a new connection; false when it is over the limit (and was not counted). */
  boolean tryOpen() {
    while (true) {
      int current = open.get();
      if (current >= maxConnections) {
        return false;
      }
      if (open.compareAndSet(current, current + 1)) {
        return true;
      }
    }
  }

  void closed() {
    open.decrementAndGet();
  }

  void requestStarted() {
    inFlight.incrementAndGet();
  }

  void requestFinished() {
    if (inFlight.decrementAndGet() == 0 && draining) {
      lock.lock();
      try {
        idle.signalAll();
      } finally {
        lock.unlock();
      }
    }
  }

  int open() {
    return open.get();
  }

  int inFlight() {
    return inFlight.get();
  }

  boolean draining() {
    return draining;
  }

  void startDraining() {
    draining = true;
  }

  /**
   * Waits (real time) until no request is in flight, at most {@code timeout}. The deadline is on
   * {@code System.nanoTime} on purpose, not the injected ticker: it bounds a real-time wait, it
   * measures nothing.
   */
  boolean awaitIdle(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    lock.lock();
    try {
      while (inFlight.get() > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        idle.await(left, TimeUnit.NANOSECONDS);
      }
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } finally {
      lock.unlock();
    }
  }
}
