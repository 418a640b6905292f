package io.spillway.routing.breaker;

import io.spillway.config.FailoverConfig;
import java.time.Duration;

/**
 * What a breaker needs to know, built once from the {@code failover} section; breakers take this,
 * not the YAML record.
 *
 * @param capacityStreak consecutive capacity answers that open the breaker
 * @param localFor how long it stays open before the half-open probe
 * @param maxLocalFor the cap on the open time when the cloud's Retry-After asks for longer
 * @param historySize transitions kept for the admin API and the dashboard
 * @param fleetTimeout the fleet breaker's longest wait on Redis
 * @param fleetRefresh how often the fleet breaker re-reads the shared state
 * @param probeLease how long a replica owns the fleet's half-open probe
 * @param localBackend whether there is a local backend to send traffic to while open
 *     ({@code local.enabled}); without one an open breaker that opened on its own keeps nothing
 *     away from the cloud, and its transition reasons say so
 */
public record BreakerSettings(
    int capacityStreak,
    Duration localFor,
    Duration maxLocalFor,
    int historySize,
    Duration fleetTimeout,
    Duration fleetRefresh,
    Duration probeLease,
    boolean localBackend) {

  /** The settings of the default {@code failover} section. */
  public static final BreakerSettings DEFAULTS = from(FailoverConfig.DEFAULTS);

  /** The settings {@code failover} describes (validated when it was built), with a local backend. */
  public static BreakerSettings from(FailoverConfig failover) {
    return new BreakerSettings(failover.capacityStreak(), failover.localFor(), failover.maxLocalFor(),
        failover.historySize(), failover.fleetTimeout(), failover.fleetRefresh(), failover.probeLease(), true);
  }

  /** These settings, for a gateway with ({@code true}) or without a local backend ({@code local.enabled}). */
  public BreakerSettings withLocalBackend(boolean enabled) {
    return new BreakerSettings(capacityStreak, localFor, maxLocalFor, historySize, fleetTimeout, fleetRefresh,
        probeLease, enabled);
  }

  /**
   * How a reason for opening says what happens next, just before the open time: "local for 5m",
   * or without a local backend that requests still go to the cloud and get its own Retry-After.
   */
  public String openWords() {
    return localBackend ? "local for "
        : "no local backend (local.enabled: false), so requests still go to the cloud and get its own"
            + " Retry-After; open for ";
  }
}
