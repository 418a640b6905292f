package io.spillway.quota.store;

/**
 * A pool's counters at one moment.
 *
 * @param used tokens settled this month (the backends' reported usage)
 * @param reserved tokens held by requests that are still running (their estimates)
 */
public record PoolUsage(long used, long reserved) {
  public static final PoolUsage ZERO = new PoolUsage(0, 0);

  /** Used plus reserved: what a new reservation is checked against. */
  public long committed() {
    return Saturating.add(used, reserved);
  }

  public PoolUsage plus(PoolUsage other) {
    return new PoolUsage(Saturating.add(used, other.used), Saturating.add(reserved, other.reserved));
  }
}
