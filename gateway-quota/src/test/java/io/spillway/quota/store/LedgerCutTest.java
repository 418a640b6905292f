package io.spillway.quota.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * What the embedded store writes to disk comes from a cut of the ledger. A cut taken while requests
 * settle must hold every settle whole: a pool total counted with its team's share, or neither. A
 * durable copy that breaks this shows, after a {@code kill -9}, a pool that has used more than its
 * teams have.
 */
class LedgerCutTest {
  private static final String MONTH = "2026-12";
  private static final int SETTLING_THREADS = 3;
  private static final int CUTS = 2_000;

  @Test
  void aCutTakenWhileRequestsSettleHasEveryPoolTotalEqualToItsTeamsSum() throws Exception {
    MemoryUsageStore ledger = new MemoryUsageStore();
    AtomicBoolean running = new AtomicBoolean(true);
    List<Future<?>> settlers = new ArrayList<>();
    try (ExecutorService threads = Executors.newFixedThreadPool(SETTLING_THREADS)) {
      for (int t = 0; t < SETTLING_THREADS; t++) {
        Tier tier = Tier.values()[t % Tier.values().length];
        String team = "team-" + t;
        settlers.add(threads.submit(() -> {
          PoolKey pool = new PoolKey(MONTH, tier);
          while (running.get()) {
            ReserveOutcome outcome = ledger.reserve(pool, team, 50, Long.MAX_VALUE);
            ledger.settle(outcome.hold(), 20);
          }
        }));
      }
      try {
        long lastTotal = -1;
        for (int i = 0; i < CUTS; i++) {
          LedgerCut cut = ledger.cut();
          long pools = cut.poolUsed().values().stream().mapToLong(Long::longValue).sum();
          long teams = cut.teamUsed().getOrDefault(MONTH, Map.of()).values().stream().mapToLong(Long::longValue).sum();
          assertThat(teams).as("cut %d: the teams' usage is the pools' usage", i).isEqualTo(pools);
          assertThat(pools).as("a later cut never holds less").isGreaterThanOrEqualTo(lastTotal);
          lastTotal = pools;
        }
        assertThat(lastTotal).as("requests settled while the cuts were taken").isPositive();
      } finally {
        running.set(false);
      }
      for (Future<?> settler : settlers) {
        settler.get();
      }
    }
  }

  @Test
  void aCutHoldsSpendUnpricedCountsAndClaimedAlerts() {
    MemoryUsageStore ledger = new MemoryUsageStore();
    ledger.addSpend(MONTH, "web", Tier.SILVER, 1_500, false);
    ledger.addSpend(MONTH, "web", Tier.SILVER, 0, true);
    ledger.claimAlert(new PoolKey(MONTH, Tier.GOLD), "soft");

    LedgerCut cut = ledger.cut();

    assertThat(cut.spendNanos()).isEqualTo(Map.of(MONTH, Map.of("web", Map.of(Tier.SILVER, 1_500L))));
    assertThat(cut.unpriced()).isEqualTo(Map.of(MONTH, Map.of(Tier.SILVER, 1L)));
    assertThat(cut.alerts()).containsExactly(MemoryUsageStore.alertKey(new PoolKey(MONTH, Tier.GOLD), "soft"));
    assertThat(cut.changes()).isEqualTo(ledger.changes());
  }
}
