package io.spillway.quota.store;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;

/**
 * The Redis keys of the shared usage ledger, per month, all under one hash tag so a month's keys
 * share a cluster slot:
 * <ul>
 *   <li>{@code {spillway:quota:2026-11}:pool:<tier>}: hash {@code used}, {@code reserved}</li>
 *   <li>{@code {spillway:quota:2026-11}:holds:<tier>}: sorted set of running holds
 *       ({@code <id>|<tokens>}, scored by expiry), so a replica that dies mid-request frees its
 *       reservations when they expire instead of leaking them for the month</li>
 *   <li>{@code {spillway:quota:2026-11}:teams}: hash team → tokens used</li>
 *   <li>{@code {spillway:quota:2026-11}:alerts}: set of bands already announced</li>
 *   <li>{@code {spillway:quota:2026-11}:settled:<id>}: short-lived marker that makes a replayed
 *       settlement (or spend amount) count once</li>
 *   <li>{@code {spillway:quota:2026-11}:spend}: hash {@code <team>|<tier>} → nano-dollars spent</li>
 *   <li>{@code {spillway:quota:2026-11}:spendUnpriced}: hash tier → cloud requests without a price</li>
 *   <li>{@code {spillway:quota:2026-11}:spendAlerts}: set of {@code <team>|<band>} already announced</li>
 * </ul>
 * A month's keys expire {@value #MONTHS_KEPT} months after the month ends.
 */
final class RedisQuotaKeys {
  static final int MONTHS_KEPT = 2;

  private final Clock clock;
  private final Duration holdTimeout;

  RedisQuotaKeys(Clock clock, Duration holdTimeout) {
    this.clock = clock;
    this.holdTimeout = holdTimeout;
  }

  static String tag(String month) {
    return "{spillway:quota:" + month + "}";
  }

  static String pool(PoolKey pool) {
    return tag(pool.month()) + ":pool:" + pool.tier().tag();
  }

  static String holds(PoolKey pool) {
    return tag(pool.month()) + ":holds:" + pool.tier().tag();
  }

  static String teams(String month) {
    return tag(month) + ":teams";
  }

  static String alerts(String month) {
    return tag(month) + ":alerts";
  }

  static String settled(String month, String id) {
    return tag(month) + ":settled:" + id;
  }

  static String spend(String month) {
    return tag(month) + ":spend";
  }

  static String spendUnpriced(String month) {
    return tag(month) + ":spendUnpriced";
  }

  static String spendAlerts(String month) {
    return tag(month) + ":spendAlerts";
  }

  /** How long a once-only marker lives: as long as a hold may. */
  long markerMillis() {
    return holdTimeout.toMillis();
  }

  long holdMillis() {
    return holdTimeout.toMillis();
  }

  long now() {
    return clock.millis();
  }

  /** Milliseconds until a month's keys may go: {@value #MONTHS_KEPT} months after the month ends. */
  long keepMillis(String month) {
    Instant until = YearMonth.parse(month).plusMonths(1 + MONTHS_KEPT).atDay(1)
        .atStartOfDay(ZoneOffset.UTC).toInstant();
    return Math.max(holdTimeout.toMillis(), until.toEpochMilli() - clock.millis());
  }
}
