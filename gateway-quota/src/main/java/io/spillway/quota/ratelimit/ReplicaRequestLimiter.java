package io.spillway.quota.ratelimit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.TimeMeter;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Request limits kept in this process: right for one gateway ({@code store: embedded:…} or
 * {@code memory}). Buckets are created per team and tier on first use; their number is bounded by
 * the configured keys. Thread-safe.
 */
public final class ReplicaRequestLimiter extends BucketRequestLimiter {
  private final TimeMeter time;
  private final Map<String, Bucket> buckets = new ConcurrentHashMap<>();

  public ReplicaRequestLimiter(RateLimitPolicy policy, Clock clock) {
    super(policy);
    this.time = new ClockTimeMeter(clock);
  }

  @Override
  protected Bucket bucket(RateLimit limit) {
    return buckets.computeIfAbsent(limit.key(), key -> Bucket.builder()
        .addLimit(configuration(limit).getBandwidths()[0])
        .withCustomTimePrecision(time)
        .build());
  }
}
