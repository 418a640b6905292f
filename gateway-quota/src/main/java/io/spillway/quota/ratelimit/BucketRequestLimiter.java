package io.spillway.quota.ratelimit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.BucketConfiguration;
import io.github.bucket4j.ConsumptionProbe;
import io.spillway.core.pipeline.Caller;
import java.time.Duration;
import java.util.List;

/**
 * A {@link RequestLimiter} over Bucket4j token buckets, one per {@link RateLimit#key()}, each with
 * capacity = the limit and a greedy refill of the limit per period. Subclasses say where buckets
 * live (this process, or Redis).
 *
 * <p>A request that several limits apply to takes one token from each, in order; if a later one
 * refuses, the tokens already taken are given back, so a refused request costs nothing.
 */
public abstract class BucketRequestLimiter implements RequestLimiter {
  private volatile RateLimitPolicy policy;

  protected BucketRequestLimiter(RateLimitPolicy policy) {
    this.policy = policy;
  }

  /** Buckets are keyed by each limit's numbers ({@link RateLimit#key()}), so unchanged ones carry over. */
  @Override
  public void limits(RateLimitPolicy next) {
    this.policy = next;
  }

  /** The bucket for {@code limit}, created on first use. */
  protected abstract Bucket bucket(RateLimit limit);

  protected static BucketConfiguration configuration(RateLimit limit) {
    return BucketConfiguration.builder()
        .addLimit(bandwidth -> bandwidth.capacity(limit.capacity()).refillGreedy(limit.capacity(), limit.period()))
        .build();
  }

  @Override
  public Decision acquire(Caller caller) {
    List<RateLimit> limits = policy.limitsFor(caller);
    if (limits.isEmpty()) {
      return Decision.UNLIMITED;
    }
    Decision tightest = null;
    for (int i = 0; i < limits.size(); i++) {
      RateLimit limit = limits.get(i);
      ConsumptionProbe probe = bucket(limit).tryConsumeAndReturnRemaining(1);
      if (!probe.isConsumed()) {
        for (int j = 0; j < i; j++) {
          bucket(limits.get(j)).addTokens(1);
        }
        return new Decision(false, limit, probe.getRemainingTokens(),
            Duration.ofNanos(probe.getNanosToWaitForReset()), Duration.ofNanos(probe.getNanosToWaitForRefill()));
      }
      if (tightest == null || probe.getRemainingTokens() < tightest.remaining()) {
        tightest = new Decision(true, limit, probe.getRemainingTokens(),
            Duration.ofNanos(probe.getNanosToWaitForReset()), Duration.ZERO);
      }
    }
    return tightest;
  }
}
