package io.spillway.quota.pool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.QuotaConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.quota.store.Hold;
import io.spillway.quota.store.PoolKey;
import io.spillway.quota.store.PoolUsage;
import io.spillway.quota.store.ReserveOutcome;
import io.spillway.quota.store.StoreStatus;
import io.spillway.quota.store.StoreUnavailableException;
import io.spillway.quota.store.UsageStore;
import java.time.Clock;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The three tier pools of the monthly token budget. {@code quota.monthlyTokens} is split by the
 * tiers' shares; each pool may run to its limit plus its overdraft (its ceiling), and moves through
 * the bands alert ({@code alertAt}), soft ({@code softAt}) and hard (100 %) as its settled usage
 * grows. Pools reset at the start of each month in {@code quota.timezone}, read from the injected
 * clock.
 *
 * <p>{@link #reserve} takes a request's estimate out of its pool atomically (in the store) or
 * refuses with 429 {@code insufficient_quota} and a {@code Retry-After} until the month's reset.
 * Each band is announced once per pool and month (log, metric, optional webhook).
 *
 * <p>{@link #reload} applies a new {@code quota} section in place, keeping the usage counted so far.
 *
 * <p>Thread-safe. {@link #pastSoftBand} and {@link #snapshot} read a cached view that every
 * reservation and settlement refreshes, so they are cheap enough for every request.
 */
public final class QuotaPools implements AutoCloseable {
  private record Policy(long limit, long ceiling) {}

  private record Cached(String month, PoolUsage usage) {}

  /**
   * Everything the pools take from {@code quota}, swapped as one value on reload so that a request
   * sees the old settings or the new ones, never a mix.
   */
  private record Settings(QuotaConfig config, Map<Tier, Policy> policies, QuotaCalendar calendar, BandAlerts alerts) {
    static Settings of(QuotaConfig config, Clock clock, MeterRegistry meters, BandAlerts alerts) {
      Map<Tier, Policy> policies = new EnumMap<>(Tier.class);
      for (Tier tier : Tier.values()) {
        QuotaConfig.TierConfig tierConfig = tierConfig(config, tier);
        long limit = Math.round(config.monthlyTokens() * tierConfig.share());
        long ceiling = limit + (long) Math.floor(limit * tierConfig.overdraft());
        policies.put(tier, new Policy(limit, ceiling));
      }
      return new Settings(config, Map.copyOf(policies), new QuotaCalendar(clock, ZoneId.of(config.timezone())),
          alerts != null ? alerts : new BandAlerts(meters, config.alertWebhook(), config.alertWebhookTimeout()));
    }

    Policy policy(Tier tier) {
      return policies.get(tier);
    }
  }

  private final UsageStore store;
  private final Clock clock;
  private final MeterRegistry meters;
  private volatile Settings settings;
  private final Map<Tier, Cached> cache = new ConcurrentHashMap<>();
  private final Set<String> announced = ConcurrentHashMap.newKeySet();
  private final Map<Tier, Counter> refused = new EnumMap<>(Tier.class);
  private final Map<Tier, Counter> inputTokens = new EnumMap<>(Tier.class);
  private final Map<Tier, Counter> outputTokens = new EnumMap<>(Tier.class);
  private final KeyBudgets keyBudgets;

  public QuotaPools(QuotaConfig config, UsageStore store, Clock clock, MeterRegistry meters) {
    this(config, store, clock, meters, KeyBudgets.NONE);
  }

  /** @param keyBudgets per-key budgets checked beside the pools (keys created through the admin API) */
  public QuotaPools(QuotaConfig config, UsageStore store, Clock clock, MeterRegistry meters, KeyBudgets keyBudgets) {
    this.keyBudgets = keyBudgets;
    this.store = store;
    this.clock = clock;
    this.meters = meters;
    this.settings = Settings.of(config, clock, meters, null);
    for (Tier tier : Tier.values()) {
      registerMeters(tier);
    }
    Gauge.builder("spillway.quota.store.healthy", store, s -> s.status().healthy() ? 1 : 0)
        .description("1 while the usage store answers; 0 while a shared store is unreachable")
        .strongReference(true)
        .register(meters);
  }

  private void registerMeters(Tier tier) {
    String t = tier.tag();
    Gauge.builder("spillway.quota.pool.usage.ratio", this, p -> p.snapshot(tier).usageRatio())
        .description("Settled tokens as a share of the pool's limit (1.0 = 100 %)")
        .tag("tier", t).strongReference(true).register(meters);
    Gauge.builder("spillway.quota.band", this, p -> p.snapshot(tier).band().ordinal())
        .description("The pool's band: 0 ok, 1 alert, 2 soft, 3 hard")
        .tag("tier", t).strongReference(true).register(meters);
    Gauge.builder("spillway.quota.pool.used.tokens", this, p -> p.snapshot(tier).used())
        .description("Tokens settled this month").tag("tier", t).strongReference(true).register(meters);
    Gauge.builder("spillway.quota.pool.reserved.tokens", this, p -> p.snapshot(tier).reserved())
        .description("Tokens held by running requests").tag("tier", t).strongReference(true).register(meters);
    Gauge.builder("spillway.quota.pool.limit.tokens", this, p -> p.settings.policy(tier).limit())
        .description("The pool's monthly limit (100 %)").tag("tier", t).strongReference(true).register(meters);
    refused.put(tier, Counter.builder("spillway.quota.refused")
        .description("Requests refused because their pool could not cover the estimate")
        .tag("tier", t).register(meters));
    inputTokens.put(tier, Counter.builder("spillway.quota.tokens")
        .description("Tokens settled, as reported by the backends")
        .tag("tier", t).tag("direction", "input").register(meters));
    outputTokens.put(tier, Counter.builder("spillway.quota.tokens")
        .description("Tokens settled, as reported by the backends")
        .tag("tier", t).tag("direction", "output").register(meters));
  }

  /**
   * Applies a reloaded {@code quota} section in place: the monthly budget, the tiers' shares and
   * overdrafts, the bands, the time zone and the alert webhook. Usage already counted is kept (it
   * lives in the store, per month and tier); a pool whose new limit is below its usage is simply
   * past its hard band from the next request on. Bands crossed only because of the new limits are
   * announced by the next request of the tier.
   */
  public void reload(QuotaConfig next) {
    Settings previous = settings;
    boolean sameWebhook = Objects.equals(previous.config().alertWebhook(), next.alertWebhook())
        && previous.config().alertWebhookTimeout().equals(next.alertWebhookTimeout());
    settings = Settings.of(next, clock, meters, sameWebhook ? previous.alerts() : null);
    if (!sameWebhook) {
      previous.alerts().close();
    }
  }

  private QuotaConfig.TierConfig tierConfig(Tier tier) {
    return tierConfig(settings.config(), tier);
  }

  private static QuotaConfig.TierConfig tierConfig(QuotaConfig config, Tier tier) {
    return config.tier(tier);
  }

  /**
   * Reserves {@code estimatedTokens} in the caller's pool.
   *
   * @throws GatewayException 429 {@code insufficient_quota} with {@code Retry-After} until the
   *     month resets when the pool cannot cover the estimate; 503 when the shared store is
   *     unreachable and {@code quota.failClosed} is set
   */
  public Reservation reserve(Caller caller, long estimatedTokens) {
    Settings settings = this.settings;
    QuotaCalendar calendar = settings.calendar();
    Tier tier = caller.tier();
    PoolKey key = currentKey(tier);
    Policy policy = settings.policy(tier);
    checkKeyBudget(caller, key.month(), estimatedTokens);
    ReserveOutcome outcome;
    try {
      outcome = store.reserve(key, caller.team(), estimatedTokens, policy.ceiling());
    } catch (StoreUnavailableException e) {
      throw ErrorKind.UNAVAILABLE.exception(
          "Spillway cannot check the " + tier.tag() + " quota pool right now: " + e.getMessage())
          .withRetryAfter(settings.config().flushInterval());
    }
    observe(key, outcome.usage());
    if (!outcome.admitted()) {
      refused.get(tier).increment();
      PoolUsage usage = outcome.usage();
      long left = Math.max(0, policy.ceiling() - usage.committed());
      String message = left == 0
          ? "The " + tier.tag() + " quota pool has used its token budget for " + key.month() + " ("
              + usage.used() + " of " + policy.ceiling() + " tokens" + overdraftNote(tier) + "). It resets at "
              + calendar.resetAt() + "."
          : "The " + tier.tag() + " quota pool cannot cover this request: it needs an estimated "
              + estimatedTokens + " tokens and " + left + " of " + policy.ceiling() + " remain for " + key.month()
              + overdraftNote(tier) + ". Ask for fewer tokens (max_tokens) or wait for the reset at "
              + calendar.resetAt() + ".";
      throw ErrorKind.QUOTA_EXCEEDED.exception(message).withRetryAfter(calendar.untilReset());
    }
    return new Reservation(this, outcome.hold(), tier, caller.keyId());
  }

  /** Refuses the request when the caller's key has a budget of its own that cannot cover it. */
  private void checkKeyBudget(Caller caller, String month, long estimatedTokens) {
    Long budget = caller.keyId() == null ? null : keyBudgets.monthlyTokens(caller.keyId());
    if (budget == null) {
      return;
    }
    long used = keyBudgets.used(month, caller.keyId());
    if (used + estimatedTokens > budget) {
      QuotaCalendar calendar = settings.calendar();
      throw ErrorKind.QUOTA_EXCEEDED.exception("The key " + caller.keyId() + " cannot cover this request"
          + " from its own budget: it has used " + used + " of its " + budget + " tokens for " + month
          + " and the request needs an estimated " + estimatedTokens + ". It resets at " + calendar.resetAt() + ".")
          .withRetryAfter(calendar.untilReset());
    }
  }

  private String overdraftNote(Tier tier) {
    return tierConfig(tier).overdraft() > 0 ? ", overdraft included" : "";
  }

  void settle(Reservation reservation, Hold hold, TokenUsage usage) {
    long actual = usage == null ? 0 : Math.max(0, usage.total());
    PoolUsage after = store.settle(hold, actual);
    if (actual > 0 && reservation.keyId() != null) {
      keyBudgets.add(hold.pool().month(), reservation.keyId(), actual);
    }
    if (usage != null) {
      inputTokens.get(reservation.tier()).increment(Math.max(0, usage.input()));
      outputTokens.get(reservation.tier()).increment(Math.max(0, usage.output()));
    }
    observe(hold.pool(), after);
  }

  /** Records a pool's new counters and announces any band it entered for the first time. */
  private void observe(PoolKey key, PoolUsage usage) {
    Settings settings = this.settings;
    QuotaCalendar calendar = settings.calendar();
    if (key.month().equals(calendar.month().toString())) {
      cache.put(key.tier(), new Cached(key.month(), usage));
    }
    Policy policy = settings.policy(key.tier());
    QuotaConfig config = settings.config();
    Band band = Band.of(usage.used(), policy.limit(), config.alertAt(), config.softAt());
    for (Band b : Band.values()) {
      if (b == Band.OK || b.compareTo(band) > 0) {
        continue;
      }
      String memo = key + "|" + b.tag();
      if (announced.contains(memo)) {
        continue;
      }
      if (store.claimAlert(key, b.tag())) {
        settings.alerts().announce(new BandAlert(key.tier(), b, key.month(), usage.used(), policy.limit(),
            threshold(config, b), calendar.resetAt(), calendar.now()));
      }
      announced.add(memo);
    }
  }

  private static double threshold(QuotaConfig config, Band band) {
    return switch (band) {
      case OK -> 0.0;
      case ALERT -> config.alertAt();
      case SOFT -> config.softAt();
      case HARD -> 1.0;
    };
  }

  /**
   * Whether the tier's pool is at or past {@code quota.softAt} this month: the shaping stage
   * degrades non-gold requests from then on. Cheap (cached).
   */
  public boolean pastSoftBand(Tier tier) {
    return snapshot(tier).band().compareTo(Band.SOFT) >= 0;
  }

  /** The most tokens one request may report per field ({@code quota.maxReportedTokens}), as configured now. */
  public long maxReportedTokens() {
    return settings.config().maxReportedTokens();
  }

  /**
   * Counts a backend's usage report that was refused ({@code spillway.quota.usage.refused}, tagged
   * with why: {@code string}, {@code fractional}, {@code negative}, {@code too_large}, {@code not_a_number}).
   */
  public void usageRefused(String reason) {
    Counter.builder("spillway.quota.usage.refused")
        .description("Usage reports from a backend refused as not a sane token count; settled at the estimate")
        .tag("reason", reason).register(meters).increment();
  }

  /** Whether reserving, settling or reading a pool may wait on the network (a Redis store). */
  public boolean mayBlock() {
    return store.blocking();
  }

  /** The pool as last seen by this gateway (cached; refreshed by every request of the tier). */
  public PoolSnapshot snapshot(Tier tier) {
    String month = settings.calendar().month().toString();
    Cached cached = cache.get(tier);
    if (cached == null || !cached.month().equals(month)) {
      PoolUsage usage = store.usage(new PoolKey(month, tier));
      cached = new Cached(month, usage);
      cache.put(tier, cached);
    }
    return toSnapshot(tier, cached.month(), cached.usage());
  }

  /** Every pool, read fresh from the store. */
  public List<PoolSnapshot> snapshots() {
    List<PoolSnapshot> result = new ArrayList<>();
    for (Tier tier : Tier.values()) {
      PoolKey key = currentKey(tier);
      PoolUsage usage = store.usage(key);
      observe(key, usage);
      result.add(toSnapshot(tier, key.month(), usage));
    }
    return result;
  }

  private PoolSnapshot toSnapshot(Tier tier, String month, PoolUsage usage) {
    Settings settings = this.settings;
    Policy policy = settings.policy(tier);
    QuotaConfig config = settings.config();
    return new PoolSnapshot(tier, month, policy.limit(), policy.ceiling(), usage.used(), usage.reserved(),
        Band.of(usage.used(), policy.limit(), config.alertAt(), config.softAt()), settings.calendar().resetAt());
  }

  /** Tokens used per team this month. */
  public Map<String, Long> teamUsage() {
    return store.teamUsage(settings.calendar().month().toString());
  }

  public QuotaCalendar calendar() {
    return settings.calendar();
  }

  public StoreStatus storeStatus() {
    return store.status();
  }

  /** What {@code GET /admin/quota} shows: every pool, per-team usage, and the store's health. */
  public ObjectNode report() {
    QuotaCalendar calendar = settings.calendar();
    ObjectNode root = Json.object();
    root.put("month", calendar.month().toString());
    root.put("timezone", calendar.zone().getId());
    root.put("resetAt", calendar.resetAt().toString());
    root.put("monthlyTokens", settings.config().monthlyTokens());
    StoreStatus status = store.status();
    ObjectNode storeNode = root.putObject("store");
    storeNode.put("kind", status.kind());
    storeNode.put("location", status.location());
    storeNode.put("healthy", status.healthy());
    storeNode.put("pendingSettlements", status.pendingSettlements());
    if (status.durableAsOf() != null) {
      storeNode.put("durableAsOf", status.durableAsOf().toString());
    }
    ObjectNode pools = root.putObject("pools");
    for (PoolSnapshot snapshot : snapshots()) {
      ObjectNode pool = pools.putObject(snapshot.tier().tag());
      QuotaConfig.TierConfig tierConfig = tierConfig(snapshot.tier());
      pool.put("share", tierConfig.share());
      pool.put("overdraft", tierConfig.overdraft());
      pool.put("limit", snapshot.limit());
      pool.put("ceiling", snapshot.ceiling());
      pool.put("used", snapshot.used());
      pool.put("reserved", snapshot.reserved());
      pool.put("remaining", snapshot.remaining());
      pool.put("usageRatio", snapshot.usageRatio());
      pool.put("band", snapshot.band().tag());
      pool.put("resetAt", snapshot.resetAt().toString());
    }
    ObjectNode teams = root.putObject("teams");
    teamUsage().forEach((team, used) -> teams.putObject(team).put("used", used));
    return root;
  }

  private PoolKey currentKey(Tier tier) {
    return new PoolKey(settings.calendar().month().toString(), tier);
  }

  /** Stops sending alerts. Does not close the store, which its creator owns. */
  @Override
  public void close() {
    settings.alerts().close();
  }
}
