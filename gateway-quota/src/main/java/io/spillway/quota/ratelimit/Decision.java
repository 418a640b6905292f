package io.spillway.quota.ratelimit;

import java.time.Duration;

/**
 * What a {@link RequestLimiter} decided for one request, and what the client is told about the
 * limit that binds it.
 *
 * @param allowed whether the request may proceed
 * @param limit the limit reported to the client (the one that rejected it, else the one with the
 *     fewest requests left); null when the caller has no request limit at all
 * @param remaining requests left in {@code limit} after this one
 * @param reset time until {@code limit} is back to its full capacity
 * @param retryAfter when rejected: time until the next request would be allowed; else zero
 */
public record Decision(boolean allowed, RateLimit limit, long remaining, Duration reset, Duration retryAfter) {
  /** Allowed, and no limit applies (gold by default). */
  public static final Decision UNLIMITED = new Decision(true, null, 0, Duration.ZERO, Duration.ZERO);

  public boolean limited() {
    return limit != null;
  }
}
