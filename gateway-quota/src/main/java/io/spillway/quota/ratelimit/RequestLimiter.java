package io.spillway.quota.ratelimit;

import io.spillway.core.pipeline.Caller;

/**
 * Decides whether a caller may send one more request now, and takes that request from its limits.
 * Which limits apply is {@link RateLimitPolicy}'s business; a limiter only keeps the buckets.
 * Implementations are thread-safe.
 */
public interface RequestLimiter extends AutoCloseable {
  Decision acquire(Caller caller);

  @Override
  default void close() {}
}
