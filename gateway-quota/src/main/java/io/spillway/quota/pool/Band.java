package io.spillway.quota.pool;

import java.util.Locale;

/**
 * How full a pool is, by its settled usage against its limit. A pool enters a band once per month
 * and stays in it until the month resets.
 */
public enum Band {
  /** Below {@code quota.alertAt}. */
  OK,
  /** At or past {@code quota.alertAt} (default 80 %): operators are warned. */
  ALERT,
  /** At or past {@code quota.softAt} (default 95 %): non-gold requests are degraded or queued. */
  SOFT,
  /** At or past 100 %: requests are refused, except within a tier's overdraft. */
  HARD;

  public String tag() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The band for {@code used} tokens of a pool with {@code limit}. */
  static Band of(long used, long limit, double alertAt, double softAt) {
    if (used >= limit) {
      return HARD;
    }
    double ratio = (double) used / limit;
    if (ratio >= softAt) {
      return SOFT;
    }
    return ratio >= alertAt ? ALERT : OK;
  }
}
