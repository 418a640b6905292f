package io.spillway.quota.store;

/**
 * How a store is doing, for {@code /admin/quota} and metrics.
 *
 * @param kind {@code memory}, {@code embedded} or {@code redis}
 * @param healthy false while a shared store is unreachable and this replica counts locally
 * @param pendingSettlements settlements made while unreachable, still to be written back
 */
public record StoreStatus(String kind, String location, boolean healthy, int pendingSettlements) {}
