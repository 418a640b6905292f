package io.spillway.quota.ratelimit;

import io.github.bucket4j.TimeMeter;
import java.time.Clock;
import java.time.Instant;

/**
 * Bucket4j's time source over the gateway's injected {@link Clock}, so buckets refill with the fake
 * clock in tests and with wall time in production. Wall-clock based, which Bucket4j requires for
 * buckets kept in Redis and shared by several replicas.
 */
public final class ClockTimeMeter implements TimeMeter {
  private final Clock clock;

  public ClockTimeMeter(Clock clock) {
    this.clock = clock;
  }

  @Override
  public long currentTimeNanos() {
    Instant now = clock.instant();
    return Math.addExact(Math.multiplyExact(now.getEpochSecond(), 1_000_000_000L), now.getNano());
  }

  @Override
  public boolean isWallClockBased() {
    return true;
  }
}
