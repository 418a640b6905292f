package io.spillway.core.upstream;

import java.time.Duration;

/**
 * The limit on one wait of a reader for its exchange (a stream's next whole event, an NDJSON
 * answer's next whole line), counted from when the reader starts waiting ({@link #arm}) until it
 * has what it waited for ({@link #disarm}). Past the limit the exchange is cancelled and
 * {@link #expired} turns true. The timer runs on the exchange's own thread; arming and disarming
 * belong to the reader.
 */
public final class WaitTimer {
  private final UpstreamExchange exchange;
  private final Duration limit;
  private volatile boolean expired;
  private Runnable timer;

  /** @param limit null or zero: no limit */
  public WaitTimer(UpstreamExchange exchange, Duration limit) {
    this.exchange = exchange;
    this.limit = limit == null || limit.isZero() ? null : limit;
  }

  /** Starts counting, unless it already is. */
  public void arm() {
    if (limit != null && timer == null) {
      timer = exchange.schedule(limit, () -> {
        expired = true;
        exchange.cancel();
      });
    }
  }

  /** Stops counting. */
  public void disarm() {
    Runnable running = timer;
    if (running != null) {
      timer = null;
      running.run();
    }
  }

  /** Whether a wait outlasted the limit (and the exchange was cancelled). */
  public boolean expired() {
    return expired;
  }

  public Duration limit() {
    return limit;
  }
}
