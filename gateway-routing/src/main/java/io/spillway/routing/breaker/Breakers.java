package io.spillway.routing.breaker;

import io.spillway.config.ShapingConfig;
import io.spillway.core.risk.ReplicaRiskCounts;
import io.spillway.core.risk.RiskCounts;
import java.time.Clock;

/** Picks the breaker, and the risk index's counts, the {@code store} config value asks for. */
public final class Breakers {
  private Breakers() {}

  /**
   * The fleet's breaker in Redis for {@code store: redis://...} (or {@code rediss://}); this
   * replica's own breaker for anything else ({@code embedded:<dir>}, {@code memory}).
   */
  public static Breaker create(String store, BreakerSettings config, Clock clock) {
    return create(Breaker.DEFAULT_ROUTE, store, config, clock);
  }

  /** The breaker of the cloud route named {@code route}, picked as above; each route has its own. */
  public static Breaker create(String route, String store, BreakerSettings config, Clock clock) {
    if (isRedis(store)) {
      return FleetBreaker.connect(route, store, config, clock);
    }
    return new ReplicaBreaker(route, config, clock);
  }

  /**
   * The fleet's risk counts in Redis for {@code store: redis://...} (kept by the same timeout rules
   * as the fleet's breaker); this replica's own counts for anything else.
   */
  public static RiskCounts riskCounts(String store, ShapingConfig.RiskConfig risk, BreakerSettings failover,
      Clock clock) {
    if (isRedis(store)) {
      return FleetRiskCounts.connect(store, risk, failover, clock);
    }
    return new ReplicaRiskCounts(risk.growthWindow(), risk.window());
  }

  private static boolean isRedis(String store) {
    return store.startsWith("redis://") || store.startsWith("rediss://");
  }
}
