package io.spillway.routing.capacity;

/** What an upstream answer means for routing: the breaker and request-level failover act on it. */
public enum Outcome {
  /** A usable answer (2xx). Resets the breaker's capacity streak. */
  SUCCESS,
  /** The model is at capacity or overloaded: counts toward the streak; the request is retried locally. */
  CAPACITY,
  /** The caller's organisation is over its rate limit: passed on with Retry-After, no failover. */
  RATE_LIMIT,
  /** The caller's organisation is out of credit: passed on with Retry-After, no failover. */
  QUOTA,
  /** No usable answer (connection refused, reset or timeout before any byte, a bare 5xx): retried locally. */
  TRANSIENT,
  /** A final answer about this request (4xx): passed on as it is. */
  FINAL;

  /** Whether a request that got this answer from the cloud is retried once on the local backend. */
  public boolean failsOver() {
    return this == CAPACITY || this == TRANSIENT;
  }

  /** The lower-case name used in metrics, logs and the admin API. */
  public String tag() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
