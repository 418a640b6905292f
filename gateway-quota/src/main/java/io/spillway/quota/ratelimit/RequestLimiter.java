package io.spillway.quota.ratelimit;

import io.spillway.core.pipeline.Caller;

/**
 * Decides whether a caller may send one more request now, and takes that request from its limits.
 * Which limits apply is {@link RateLimitPolicy}'s business; a limiter only keeps the buckets.
 * Implementations are thread-safe.
 */
public interface RequestLimiter extends AutoCloseable {
  Decision acquire(Caller caller);

  /** Whether {@link #acquire} may wait on the network (Redis); an in-process limiter says false. */
  default boolean mayBlock() {
    return false;
  }

  /**
   * Replaces the limits (a reloaded {@code quota}). A limit whose numbers did not change keeps its
   * bucket, and so what its callers have used; a changed limit starts with a full bucket.
   */
  void limits(RateLimitPolicy policy);

  @Override
  default void close() {}
}
