package io.spillway.server;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes of request bodies the gateway holds for requests whose body has not ended yet: one budget
 * for the whole server ({@code server.maxPendingBodyBytes}) and one per HTTP/2 connection ({@code
 * server.http2.maxPendingBodyBytesPerConnection}). Once a body ends it leaves the budget (the
 * request is then served, and bounded by the admission limits). Thread-safe.
 */
final class PendingBodyBudget {
  private final long max;
  private final String setting;
  private final AtomicLong held = new AtomicLong();

  PendingBodyBudget(long max, String setting) {
    this.max = max;
    this.setting = setting;
  }

  /** Takes {@code bytes} from the budget, or nothing and answers false if they do not fit. */
  boolean tryReserve(long bytes) {
    long now;
    do {
      now = held.get();
      if (now + bytes > max) {
        return false;
      }
    } while (!held.compareAndSet(now, now + bytes));
    return true;
  }

  void release(long bytes) {
    held.addAndGet(-bytes);
  }

  long held() {
    return held.get();
  }

  /** The config key that sets this budget, for the refusal's message. */
  String setting() {
    return setting;
  }
}
