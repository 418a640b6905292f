package io.spillway.quota.store;

import io.spillway.core.pipeline.Tier;
import java.util.Map;
import java.util.Set;

/**
 * The ledger's counters as they stood at one instant ({@link MemoryUsageStore#cut}): what a durable
 * copy writes. Every settle is either wholly in it or wholly out of it.
 *
 * @param changes the ledger's change counter at the cut
 * @param poolUsed settled tokens per pool
 * @param teamUsed month → team → settled tokens
 * @param spendNanos month → team → tier → nano-dollars
 * @param unpriced month → tier → requests no price applied to
 * @param alerts the alert keys already claimed
 */
record LedgerCut(long changes, Map<PoolKey, Long> poolUsed, Map<String, Map<String, Long>> teamUsed,
    Map<String, Map<String, Map<Tier, Long>>> spendNanos, Map<String, Map<Tier, Long>> unpriced,
    Set<String> alerts) {}
