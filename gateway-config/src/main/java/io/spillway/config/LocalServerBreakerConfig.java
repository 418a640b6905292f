package io.spillway.config;

import java.time.Duration;

/**
 * The failure-rate breaker each local server has of its own ({@code local.serverBreaker}): it takes
 * a server that fails (connection refused, HTTP 5xx, timeouts) out of the selection, and lets it
 * back through a few trial requests once {@code waitInOpen} has passed.
 *
 * @param failureRateThreshold the percentage of failed calls among the last {@code window} calls at
 *     which the server is taken out (1-100)
 * @param window how many of a server's latest calls the failure rate is computed over; no decision
 *     is made before that many calls
 * @param waitInOpen how long a server that was taken out gets no requests before trial requests
 * @param halfOpenCalls how many trial requests decide whether the server is back
 */
public record LocalServerBreakerConfig(
    Integer failureRateThreshold, Integer window, Duration waitInOpen, Integer halfOpenCalls) {

  public static final LocalServerBreakerConfig DEFAULTS = new LocalServerBreakerConfig(null, null, null, null);

  public LocalServerBreakerConfig {
    failureRateThreshold = failureRateThreshold != null ? failureRateThreshold : 50;
    window = window != null ? window : 10;
    waitInOpen = waitInOpen != null ? waitInOpen : Duration.ofSeconds(30);
    halfOpenCalls = halfOpenCalls != null ? halfOpenCalls : 2;
    ConfigProblems.Reporter at = ConfigProblems.at("local.serverBreaker");
    if (failureRateThreshold < 1 || failureRateThreshold > 100) {
      at.problem("failureRateThreshold", failureRateThreshold + " is not a percentage (1-100)");
    }
    if (window < 1) {
      at.problem("window", "must be at least 1 call");
    }
    at.atLeast("halfOpenCalls", halfOpenCalls, 1);
    at.positive("waitInOpen", waitInOpen, "must be longer than zero");
  }
}
