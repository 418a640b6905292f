package io.spillway.core.config;

import java.time.Duration;

/** The exact response cache for deterministic requests. */
public record CacheConfig(Boolean enabled, DataSize maxSize, Duration ttl) {
  public static final CacheConfig DEFAULTS = new CacheConfig(null, null, null);

  public CacheConfig {
    enabled = enabled != null ? enabled : true;
    maxSize = maxSize != null ? maxSize : DataSize.ofMebibytes(256);
    ttl = ttl != null ? ttl : Duration.ofMinutes(10);
  }
}
