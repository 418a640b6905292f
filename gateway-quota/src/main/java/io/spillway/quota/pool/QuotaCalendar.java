package io.spillway.quota.pool;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneId;

/** The quota month: which month it is and when it resets, in {@code quota.timezone}. Thread-safe. */
public final class QuotaCalendar {
  private final Clock clock;
  private final ZoneId zone;

  public QuotaCalendar(Clock clock, ZoneId zone) {
    this.clock = clock;
    this.zone = zone;
  }

  public YearMonth month() {
    return YearMonth.from(clock.instant().atZone(zone));
  }

  /** The start of the next month in the quota zone: when every pool starts again from zero. */
  public Instant resetAt() {
    return month().plusMonths(1).atDay(1).atStartOfDay(zone).toInstant();
  }

  public Duration untilReset() {
    return Duration.between(clock.instant(), resetAt());
  }

  public Instant now() {
    return clock.instant();
  }

  public ZoneId zone() {
    return zone;
  }
}
