package io.spillway.quota.ratelimit;

/** A key's own request limit, beside its team's and tier's (keys created through the admin API). */
@FunctionalInterface
public interface KeyRateLimits {
  KeyRateLimits NONE = keyId -> null;

  /** Requests per minute the key may send, or null when it has no limit of its own. */
  Integer requestsPerMinute(String keyId);
}
