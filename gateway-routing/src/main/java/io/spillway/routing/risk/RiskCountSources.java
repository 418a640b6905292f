package io.spillway.routing.risk;

import io.spillway.config.ShapingConfig;
import io.spillway.core.risk.ReplicaRiskCounts;
import io.spillway.core.risk.RiskCounts;
import io.spillway.redis.RedisLink;
import io.spillway.routing.breaker.BreakerSettings;
import java.time.Clock;

/** Picks the risk index's counts the {@code store} config value asks for. */
public final class RiskCountSources {
  private RiskCountSources() {}

  /**
   * The fleet's risk counts in Redis when the process has a Redis link (kept by the same timeout
   * rules as the fleet's breaker); this replica's own counts otherwise.
   *
   * @param redis the process's link to Redis, or null when the store is not Redis
   */
  public static RiskCounts open(RedisLink redis, ShapingConfig.RiskConfig risk, BreakerSettings failover,
      Clock clock) {
    if (redis != null) {
      return FleetRiskCounts.connect(redis, risk, failover, clock);
    }
    return new ReplicaRiskCounts(risk.growthWindow(), risk.window());
  }
}
