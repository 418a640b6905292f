package io.spillway.quota.store;

import io.spillway.core.pipeline.Tier;

/**
 * One tier's pool in one month: the unit that usage is counted in and limits are checked against.
 *
 * @param month the calendar month in the quota time zone, as {@code 2026-11}
 */
public record PoolKey(String month, Tier tier) {
  @Override
  public String toString() {
    return month + "/" + tier.tag();
  }
}
