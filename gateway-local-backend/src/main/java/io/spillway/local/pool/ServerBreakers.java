package io.spillway.local.pool;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.spillway.config.LocalServerBreakerConfig;
import java.time.Clock;
import java.time.Duration;

/**
 * Builds the failure-rate breaker of one local server from {@code local.serverBreaker}, with
 * Resilience4j's {@link CircuitBreaker}: a count-based window of the server's latest calls, open at
 * the configured failure rate, a few trial calls once the wait has passed. Time comes from the
 * gateway's clock. Calls are never "slow": a long stream is not a failing server.
 */
final class ServerBreakers {
  /** Longer than any call: long streams must not count as slow calls (Resilience4j's default is 60s). */
  private static final Duration NEVER_SLOW = Duration.ofDays(3650);

  private ServerBreakers() {}

  static CircuitBreaker create(String serverName, LocalServerBreakerConfig config, Clock clock) {
    CircuitBreakerConfig breaker = CircuitBreakerConfig.custom()
        .failureRateThreshold(config.failureRateThreshold())
        .slidingWindow(config.window(), config.window(), CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
        .waitDurationInOpenState(config.waitInOpen())
        .permittedNumberOfCallsInHalfOpenState(config.halfOpenCalls())
        .automaticTransitionFromOpenToHalfOpenEnabled(false)
        .slowCallDurationThreshold(NEVER_SLOW)
        .slowCallRateThreshold(100)
        .recordException(e -> true)
        .clock(clock)
        .build();
    return CircuitBreaker.of("local-" + serverName, breaker);
  }
}
