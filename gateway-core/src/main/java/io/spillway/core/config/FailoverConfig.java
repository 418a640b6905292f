package io.spillway.core.config;

import java.time.Duration;

/**
 * When traffic moves to the local backend and back.
 *
 * @param capacityStreak consecutive capacity answers that open the breaker
 * @param localFor how long traffic stays local before the half-open probe
 * @param maxLocalFor the cap on {@code localFor} when the cloud's Retry-After asks for longer
 * @param retryLocally whether a request that itself got a capacity answer is retried on local once
 * @param historySize how many breaker transitions {@code /admin/breaker} and the dashboard keep
 */
public record FailoverConfig(
    Integer capacityStreak, Duration localFor, Duration maxLocalFor, Boolean retryLocally, Integer historySize) {

  public static final FailoverConfig DEFAULTS = new FailoverConfig(null, null, null, null, null);

  public FailoverConfig {
    capacityStreak = capacityStreak != null ? capacityStreak : 3;
    localFor = localFor != null ? localFor : Duration.ofMinutes(5);
    maxLocalFor = maxLocalFor != null ? maxLocalFor : Duration.ofHours(1);
    retryLocally = retryLocally != null ? retryLocally : true;
    historySize = historySize != null ? historySize : 50;
  }
}
