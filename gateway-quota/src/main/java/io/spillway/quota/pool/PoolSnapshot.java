package io.spillway.quota.pool;

import io.spillway.core.pipeline.Tier;
import java.time.Instant;

/**
 * One pool at one moment.
 *
 * @param limit the pool's share of the monthly budget (100 %)
 * @param ceiling the limit plus the tier's overdraft: where reservations are refused
 * @param used tokens settled this month
 * @param reserved tokens held by running requests
 */
public record PoolSnapshot(
    Tier tier, String month, long limit, long ceiling, long used, long reserved, Band band, Instant resetAt) {

  /** Used tokens as a share of the limit (may pass 1.0 within an overdraft). */
  public double usageRatio() {
    return limit == 0 ? (used > 0 ? 1.0 : 0.0) : (double) used / limit;
  }

  /** Tokens that may still be reserved before requests are refused. */
  public long remaining() {
    return Math.max(0, ceiling - used - reserved);
  }
}
