package io.spillway.config;

import java.time.Duration;

/**
 * When traffic moves to the local backend and back.
 *
 * @param capacityStreak consecutive capacity answers that open the breaker
 * @param localFor how long traffic stays local before the half-open probe
 * @param maxLocalFor the cap on {@code localFor} when the cloud's Retry-After asks for longer
 * @param retryLocally whether a request that itself got a capacity answer is retried on local once
 * @param historySize how many breaker transitions {@code /admin/breaker} and the dashboard keep
 * @param fleetTimeout with {@code store: redis://...}: the longest a request waits on Redis for the
 *     fleet's breaker; past it the replica decides with its own breaker until Redis answers again
 * @param fleetRefresh with Redis: how often a replica re-reads the fleet's breaker (beside the pushed
 *     changes) and, while Redis is away, tries to reach it again
 * @param probeLease with Redis: how long the half-open probe belongs to the replica that took it;
 *     a probe whose replica died without an answer is handed on after this
 */
public record FailoverConfig(
    Integer capacityStreak,
    Duration localFor,
    Duration maxLocalFor,
    Boolean retryLocally,
    Integer historySize,
    Duration fleetTimeout,
    Duration fleetRefresh,
    Duration probeLease) {

  public static final FailoverConfig DEFAULTS = new FailoverConfig(null, null, null, null, null, null, null, null);

  public FailoverConfig {
    capacityStreak = capacityStreak != null ? capacityStreak : 3;
    localFor = localFor != null ? localFor : Duration.ofMinutes(5);
    maxLocalFor = maxLocalFor != null ? maxLocalFor : Duration.ofHours(1);
    retryLocally = retryLocally != null ? retryLocally : true;
    historySize = historySize != null ? historySize : 50;
    fleetTimeout = fleetTimeout != null ? fleetTimeout : Duration.ofMillis(200);
    fleetRefresh = fleetRefresh != null ? fleetRefresh : Duration.ofMillis(500);
    probeLease = probeLease != null ? probeLease : Duration.ofMinutes(3);
    ConfigProblems.Reporter at = ConfigProblems.at("failover");
    at.atLeast("capacityStreak", capacityStreak, 1);
    at.positive("localFor", localFor, "must be longer than 0s");
    if (maxLocalFor.compareTo(localFor) < 0) {
      at.problem("maxLocalFor", Durations.format(maxLocalFor) + " is shorter than " + at.path("localFor")
          + " (" + Durations.format(localFor) + ")");
    }
    at.atLeast("historySize", historySize, 1);
    at.positive("fleetTimeout", fleetTimeout, "must be longer than 0s");
    at.positive("fleetRefresh", fleetRefresh, "must be longer than 0s");
    at.positive("probeLease", probeLease, "must be longer than 0s");
  }
}
