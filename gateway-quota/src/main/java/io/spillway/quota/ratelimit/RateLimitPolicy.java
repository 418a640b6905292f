package io.spillway.quota.ratelimit;

import io.spillway.config.QuotaConfig;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which request limits apply to a caller, from {@code quota.tiers.<tier>} and {@code quota.teams}.
 * Resolving who calls (key → team, tier) is the auth stage's job; this only maps a caller to limits.
 *
 * <ul>
 *   <li>{@code requestsPerMinutePerTeam}: one bucket per team of the tier (silver: 50 by default).
 *   <li>{@code requestsPerHour}: one bucket for the whole tier, shared by all its teams (bronze: 200
 *       by default).
 *   <li>{@code quota.teams.<team>.requestsPerMinute} replaces the tier's per-minute limit for that
 *       team; {@code requestsPerHour} gives the team its own hourly bucket instead of a share of the
 *       tier's. Overrides apply to any tier, gold included.
 * </ul>
 *
 * A tier with neither field set and no team override (gold by default) has no request limit.
 * A key created with its own {@code requestsPerMinute} ({@link KeyRateLimits}) gets one more bucket,
 * its own, beside these. Thread-safe; team and tier limits are computed once per team and tier.
 */
public final class RateLimitPolicy {
  private final QuotaConfig config;
  private final KeyRateLimits keyLimits;
  private final Map<Caller, List<RateLimit>> resolved = new ConcurrentHashMap<>();

  public RateLimitPolicy(QuotaConfig config) {
    this(config, KeyRateLimits.NONE);
  }

  public RateLimitPolicy(QuotaConfig config, KeyRateLimits keyLimits) {
    this.config = config;
    this.keyLimits = keyLimits;
  }

  /** The limits that apply to {@code caller}, empty when none does. */
  public List<RateLimit> limitsFor(Caller caller) {
    List<RateLimit> shared = resolved.computeIfAbsent(new Caller(caller.team(), caller.tier(), ""), this::resolve);
    Integer perKey = caller.keyId() == null ? null : keyLimits.requestsPerMinute(caller.keyId());
    if (perKey == null) {
      return shared;
    }
    List<RateLimit> limits = new ArrayList<>(shared);
    limits.add(new RateLimit("key:" + caller.keyId() + ":1m:" + perKey, "key " + caller.keyId(), perKey,
        Duration.ofMinutes(1)));
    return List.copyOf(limits);
  }

  private List<RateLimit> resolve(Caller caller) {
    Tier tier = caller.tier();
    String team = caller.team();
    QuotaConfig.TierConfig tierConfig = tierConfig(tier);
    QuotaConfig.TeamConfig teamConfig = config.teams().get(team);
    List<RateLimit> limits = new ArrayList<>(2);

    Integer perMinute = teamConfig != null && teamConfig.requestsPerMinute() != null
        ? teamConfig.requestsPerMinute()
        : tierConfig.requestsPerMinutePerTeam();
    if (perMinute != null) {
      limits.add(new RateLimit(tier.tag() + ":team:" + team + ":1m:" + perMinute, "team " + team,
          perMinute, Duration.ofMinutes(1)));
    }
    if (teamConfig != null && teamConfig.requestsPerHour() != null) {
      int perHour = teamConfig.requestsPerHour();
      limits.add(new RateLimit(tier.tag() + ":team:" + team + ":1h:" + perHour, "team " + team,
          perHour, Duration.ofHours(1)));
    } else if (tierConfig.requestsPerHour() != null) {
      int perHour = tierConfig.requestsPerHour();
      limits.add(new RateLimit(tier.tag() + ":tier:1h:" + perHour, "the " + tier.tag() + " tier",
          perHour, Duration.ofHours(1)));
    }
    return List.copyOf(limits);
  }

  private QuotaConfig.TierConfig tierConfig(Tier tier) {
    return config.tier(tier);
  }
}
