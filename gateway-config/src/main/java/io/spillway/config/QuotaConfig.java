package io.spillway.config;

import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;

/**
 * The monthly token budget, its split into tier pools, and rate limits.
 *
 * @param alertAt share of a pool at which an alert fires (log, metric, webhook)
 * @param softAt share of a pool past which non-gold requests are degraded or queued
 * @param timezone the zone whose month boundaries reset the pools
 * @param defaultMaxTokens completion tokens assumed for the estimate when a request sets none
 * @param flushInterval how often the embedded store writes usage to disk (the most lost on kill -9)
 * @param teams per-team rate-limit overrides
 * @param failClosed with the Redis store unreachable: refuse requests instead of serving on local accounting
 * @param storeTimeout the longest one call to the Redis store may take before it counts as unreachable
 * @param alertWebhookTimeout the longest one band-alert webhook POST may take
 * @param maxReportedTokens the most prompt (or completion) tokens one request may report; a backend's
 *     report above it, negative, fractional or not a number is refused and the request settled at
 *     its estimate (default {@value #DEFAULT_MAX_REPORTED_TOKENS}: twice the largest context window a
 *     model offers today, so a real answer never comes near it)
 */
public record QuotaConfig(
    Long monthlyTokens,
    Double alertAt,
    Double softAt,
    Map<Tier, TierConfig> tiers,
    String timezone,
    String alertWebhook,
    Integer defaultMaxTokens,
    Duration flushInterval,
    Map<String, TeamConfig> teams,
    AdmissionConfig admission,
    Boolean failClosed,
    Duration storeTimeout,
    Duration alertWebhookTimeout,
    Long maxReportedTokens) {

  public static final long DEFAULT_MAX_REPORTED_TOKENS = 2_000_000L;

  public static final QuotaConfig DEFAULTS =
      new QuotaConfig(null, null, null, null, null, null, null, null, null, null, null, null, null, null);

  /** The section without {@code maxReportedTokens} (its default). */
  public QuotaConfig(Long monthlyTokens, Double alertAt, Double softAt, Map<Tier, TierConfig> tiers, String timezone,
      String alertWebhook, Integer defaultMaxTokens, Duration flushInterval, Map<String, TeamConfig> teams,
      AdmissionConfig admission, Boolean failClosed, Duration storeTimeout, Duration alertWebhookTimeout) {
    this(monthlyTokens, alertAt, softAt, tiers, timezone, alertWebhook, defaultMaxTokens, flushInterval, teams,
        admission, failClosed, storeTimeout, alertWebhookTimeout, null);
  }

  public QuotaConfig {
    monthlyTokens = monthlyTokens != null ? monthlyTokens : 50_000_000L;
    alertAt = alertAt != null ? alertAt : 0.80;
    softAt = softAt != null ? softAt : 0.95;
    tiers = TierMaps.withDefaults(tiers, TierConfig.DEFAULTS, TierConfig::merge);
    timezone = timezone != null ? timezone : "UTC";
    defaultMaxTokens = defaultMaxTokens != null ? defaultMaxTokens : 1024;
    flushInterval = flushInterval != null ? flushInterval : Duration.ofSeconds(1);
    teams = teams != null ? Map.copyOf(teams) : Map.of();
    admission = admission != null ? admission : AdmissionConfig.DEFAULTS;
    failClosed = failClosed != null ? failClosed : false;
    storeTimeout = storeTimeout != null ? storeTimeout : Duration.ofSeconds(1);
    alertWebhookTimeout = alertWebhookTimeout != null ? alertWebhookTimeout : Duration.ofSeconds(10);
    maxReportedTokens = maxReportedTokens != null ? maxReportedTokens : DEFAULT_MAX_REPORTED_TOKENS;
    ConfigProblems.Reporter at = ConfigProblems.at("quota");
    if (monthlyTokens < 0) {
      at.problem("monthlyTokens", "must not be negative");
    }
    if (!(alertAt > 0 && alertAt <= softAt && softAt <= 1.0)) {
      at.raw("key '" + at.path("alertAt") + "'/'" + at.path("softAt") + "': need 0 < alertAt <= softAt <= 1");
    }
    double shares = tiers.values().stream().mapToDouble(TierConfig::share).sum();
    if (shares > 1.0 + 1e-9) {
      at.problem("tiers", "shares add up to " + shares + ", more than 1");
    }
    tiers.forEach((tier, limits) -> limits.check(at.below("tiers." + tier.tag())));
    at.atLeast("defaultMaxTokens", defaultMaxTokens, 1);
    at.atLeast("maxReportedTokens", maxReportedTokens, 1);
    at.positive("flushInterval", flushInterval, "must be longer than zero");
    at.positive("storeTimeout", storeTimeout, "must be longer than zero");
    at.positive("alertWebhookTimeout", alertWebhookTimeout, "must be longer than zero");
    if (alertWebhook != null && !alertWebhook.isBlank()) {
      at.url("alertWebhook", alertWebhook);
    }
    teams.forEach((team, limits) -> {
      if (limits != null) {
        at.limit("teams." + team + ".requestsPerMinute", limits.requestsPerMinute());
        at.limit("teams." + team + ".requestsPerHour", limits.requestsPerHour());
      }
    });
    try {
      ZoneId.of(timezone);
    } catch (RuntimeException e) {
      at.problem("timezone", "'" + timezone + "' is not a time zone");
    }
  }

  /** The pool and limits of {@code tier}. */
  public TierConfig tier(Tier tier) {
    return tiers.get(tier);
  }


  /**
   * One tier's pool and limits. A null rate limit means none.
   *
   * @param overdraft how far past 100 % of its pool the tier may go (0.10 = to 110 %)
   * @param maxWait the longest a request of this tier waits in the admission queue
   */
  public record TierConfig(
      Double share,
      Double overdraft,
      Integer requestsPerMinutePerTeam,
      Integer requestsPerHour,
      Duration maxWait) {

    /** Each tier's defaults. */
    static final Map<Tier, TierConfig> DEFAULTS = Map.of(
        Tier.GOLD, new TierConfig(0.20, 0.10, null, null, Duration.ofSeconds(30)),
        Tier.SILVER, new TierConfig(0.50, 0.0, 50, null, Duration.ofSeconds(10)),
        Tier.BRONZE, new TierConfig(0.30, 0.0, null, 200, Duration.ofSeconds(5)));

    /** Checks a tier's merged settings under its key ({@code quota.tiers.gold}). */
    void check(ConfigProblems.Reporter at) {
      if (share < 0 || overdraft < 0) {
        at.problem("", "share and overdraft must not be negative");
      }
      at.limit("requestsPerMinutePerTeam", requestsPerMinutePerTeam);
      at.limit("requestsPerHour", requestsPerHour);
      if (maxWait.isNegative()) {
        at.problem("maxWait", "must not be negative");
      }
    }

    static TierConfig merge(TierConfig given, TierConfig defaults) {
      if (given == null) {
        return defaults;
      }
      return new TierConfig(
          given.share != null ? given.share : defaults.share,
          given.overdraft != null ? given.overdraft : defaults.overdraft,
          given.requestsPerMinutePerTeam != null ? given.requestsPerMinutePerTeam : defaults.requestsPerMinutePerTeam,
          given.requestsPerHour != null ? given.requestsPerHour : defaults.requestsPerHour,
          given.maxWait != null ? given.maxWait : defaults.maxWait);
    }
  }

  /** Per-team overrides of the tier's rate limit. */
  public record TeamConfig(Integer requestsPerMinute, Integer requestsPerHour) {}

  /**
   * The waiting area in front of each backend.
   *
   * @param cloudConcurrency requests in flight to the cloud at once
   * @param localConcurrency requests in flight to the local backend at once (a GPU serves few)
   * @param queueSize requests that may wait; beyond this they are refused at once
   */
  public record AdmissionConfig(Integer cloudConcurrency, Integer localConcurrency, Integer queueSize) {
    public static final AdmissionConfig DEFAULTS = new AdmissionConfig(null, null, null);

    public AdmissionConfig {
      cloudConcurrency = cloudConcurrency != null ? cloudConcurrency : 512;
      localConcurrency = localConcurrency != null ? localConcurrency : 8;
      queueSize = queueSize != null ? queueSize : 10_000;
      ConfigProblems.Reporter at = ConfigProblems.at("quota.admission");
      at.limit("cloudConcurrency", cloudConcurrency);
      at.limit("localConcurrency", localConcurrency);
      if (queueSize < 0) {
        at.problem("queueSize", "must not be negative");
      }
    }
  }
}
