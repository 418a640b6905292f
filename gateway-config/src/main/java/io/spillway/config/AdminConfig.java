package io.spillway.config;

import java.time.Duration;

/**
 * The admin API and dashboard. With no token configured, {@code /admin/*} is switched off.
 *
 * @param keySyncInterval how often each replica looks for keys created, rotated or revoked through
 *     the API on another replica (default 250ms: a change reaches every replica within a second)
 * @param rotationOverlap how long a rotated key's old secret keeps working when the rotate call
 *     names no {@code overlap} (default 1h)
 */
public record AdminConfig(String token, Duration keySyncInterval, Duration rotationOverlap) {
  public static final AdminConfig DEFAULTS = new AdminConfig(null, null, null);

  public AdminConfig {
    token = token == null || token.isBlank() ? null : token;
    keySyncInterval = keySyncInterval != null ? keySyncInterval : Duration.ofMillis(250);
    rotationOverlap = rotationOverlap != null ? rotationOverlap : Duration.ofHours(1);
    ConfigProblems.Reporter at = ConfigProblems.at("admin");
    at.positive("keySyncInterval", keySyncInterval, "must be longer than zero");
    at.positive("rotationOverlap", rotationOverlap, "must be longer than zero");
  }

  public boolean enabled() {
    return token != null;
  }
}
