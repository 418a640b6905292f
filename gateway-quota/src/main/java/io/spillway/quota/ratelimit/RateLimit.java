package io.spillway.quota.ratelimit;

import java.time.Duration;

/**
 * One request limit: at most {@code capacity} requests per {@code period}, refilled smoothly (one
 * request every {@code period / capacity}). Limits with the same {@code key} share one bucket.
 *
 * @param key the bucket's identity, e.g. {@code silver:team:web:1m:50} or {@code bronze:tier:1h:200};
 *     it names the capacity and period so that a changed config starts a fresh bucket
 * @param scope what the limit applies to, for error messages ({@code team web}, {@code the bronze tier})
 */
public record RateLimit(String key, String scope, long capacity, Duration period) {
  public RateLimit {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1: " + key);
    }
    if (period.isNegative() || period.isZero()) {
      throw new IllegalArgumentException("period must be positive: " + key);
    }
  }

  /** {@code per min (RPM)} or {@code per hour (RPH)}, as in OpenAI's rate-limit messages. */
  String periodName() {
    if (period.equals(Duration.ofMinutes(1))) {
      return "requests per min (RPM)";
    }
    if (period.equals(Duration.ofHours(1))) {
      return "requests per hour (RPH)";
    }
    return "requests per " + ResetFormat.format(period);
  }
}
