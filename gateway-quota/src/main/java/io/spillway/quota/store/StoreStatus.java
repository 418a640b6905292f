package io.spillway.quota.store;

import java.time.Instant;

/**
 * How a store is doing, for {@code /admin/quota} and metrics.
 *
 * @param kind {@code memory}, {@code embedded} or {@code redis}
 * @param healthy false while a shared store is unreachable and this replica counts locally
 * @param pendingSettlements settlements made while unreachable, still to be written back
 * @param durableAsOf for the embedded store: usage settled before this instant is on disk (the
 *     start of the last flush that succeeded); null before the first flush and for other stores
 */
public record StoreStatus(String kind, String location, boolean healthy, int pendingSettlements, Instant durableAsOf) {
  public StoreStatus(String kind, String location, boolean healthy, int pendingSettlements) {
    this(kind, location, healthy, pendingSettlements, null);
  }
}
