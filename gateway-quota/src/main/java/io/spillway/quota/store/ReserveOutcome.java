package io.spillway.quota.store;

/**
 * The answer to a reservation: the hold when it was admitted (null when refused), and the pool's
 * counters right after the decision.
 */
public record ReserveOutcome(Hold hold, PoolUsage usage) {
  public boolean admitted() {
    return hold != null;
  }
}
