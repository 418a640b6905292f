package io.spillway.core.testing;

import io.spillway.core.time.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that moves only when a test says so, and the {@link Ticker} of the same time: pass it as
 * both, and one {@link #advance} moves the wall time and every duration being measured. Thread-safe.
 */
public final class FakeClock extends Clock implements Ticker {
  private final AtomicReference<Instant> now;
  private final ZoneId zone;

  public FakeClock(Instant start) {
    this(new AtomicReference<>(start), ZoneOffset.UTC);
  }

  private FakeClock(AtomicReference<Instant> now, ZoneId zone) {
    this.now = now;
    this.zone = zone;
  }

  public static FakeClock at(String isoInstant) {
    return new FakeClock(Instant.parse(isoInstant));
  }

  public void advance(Duration duration) {
    now.updateAndGet(t -> t.plus(duration));
  }

  public void set(Instant instant) {
    now.set(instant);
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  /** The fake time as nanoseconds since the epoch (a duration is the difference of two reads). */
  @Override
  public long read() {
    Instant t = now.get();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  @Override
  public Clock withZone(ZoneId newZone) {
    return new FakeClock(now, newZone);
  }
}
