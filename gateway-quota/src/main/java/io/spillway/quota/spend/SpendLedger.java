package io.spillway.quota.spend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.QuotaConfig;
import io.spillway.config.SpendConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.quota.pool.Band;
import io.spillway.quota.pool.QuotaCalendar;
import io.spillway.quota.pool.TokenUsage;
import io.spillway.quota.store.MonthSpend;
import io.spillway.quota.store.UsageStore;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * What requests cost in USD, per team and tier for the current quota month, and the teams' money
 * budgets ({@code spend.teams.<team>.monthlyUsd}).
 *
 * <p>A request served by the cloud costs its settled usage at its model's price
 * ({@code spend.prices}, over the shipped table): uncached prompt tokens at {@code input}, cached
 * ones at {@code cachedInput}, completion tokens at {@code output}. One served by the local backend
 * costs 0. A cloud request whose model has no price costs 0 and is counted as unpriced.
 *
 * <p>A team with a budget moves through the quota bands ({@code quota.alertAt}, {@code quota.softAt},
 * 100 %), each announced once per team and month (log, metric, {@code quota.alertWebhook}); from
 * 100 % on its requests are refused with 429 {@code insufficient_quota} and a {@code Retry-After}
 * until the month resets. The request that crosses the budget is not cut short: the check is made
 * before a request starts, with what the team has spent so far.
 *
 * <p>The amounts live in the {@link UsageStore}, beside the token usage, in nano-dollars per month,
 * team and tier: durable with the embedded store, shared by every replica with Redis (which also
 * announces each band once for the whole fleet). Thread-safe.
 */
public final class SpendLedger implements AutoCloseable {
  private static final String OTHER_MODEL = "other";
  private static final double NANOS_PER_USD = 1e9;

  private record Settings(PriceTable prices, SpendConfig spend, double alertAt, double softAt, SpendAlerts alerts,
      String webhook, Duration webhookTimeout) {}

  private final Supplier<QuotaCalendar> calendar;
  private final UsageStore store;
  private final MeterRegistry meters;
  private volatile Settings settings;

  /**
   * @param calendar the quota pools' calendar (its month and time zone); read on every call so a
   *     reloaded {@code quota.timezone} applies
   * @param store where the amounts are added and read: the usage store of the token pools
   */
  public SpendLedger(SpendConfig spend, QuotaConfig quota, Supplier<QuotaCalendar> calendar, UsageStore store,
      MeterRegistry meters) {
    this.calendar = calendar;
    this.store = store;
    this.meters = meters;
    this.settings = settings(spend, quota, null);
    for (Tier tier : Tier.values()) {
      Gauge.builder("spillway.spend.month.usd", this, l -> l.monthSpend().tier(tier) / NANOS_PER_USD)
          .description("Money spent this quota month, USD, as the usage store holds it (every replica's with Redis)")
          .tag("tier", tier.tag()).strongReference(true).register(meters);
    }
  }

  private Settings settings(SpendConfig spend, QuotaConfig quota, Settings previous) {
    boolean sameWebhook = previous != null && Objects.equals(previous.webhook(), quota.alertWebhook())
        && previous.webhookTimeout().equals(quota.alertWebhookTimeout());
    SpendAlerts alerts = sameWebhook ? previous.alerts()
        : new SpendAlerts(meters, quota.alertWebhook(), quota.alertWebhookTimeout());
    if (previous != null && !sameWebhook) {
      previous.alerts().close();
    }
    return new Settings(new PriceTable(spend), spend, quota.alertAt(), quota.softAt(), alerts,
        quota.alertWebhook(), quota.alertWebhookTimeout());
  }

  /** Applies a reloaded {@code spend} section and the quota bands; amounts spent so far are kept. */
  public void reload(SpendConfig spend, QuotaConfig quota) {
    settings = settings(spend, quota, settings);
  }

  private String month() {
    return calendar.get().month().toString();
  }

  private MonthSpend monthSpend() {
    return store.spend(month());
  }

  /**
   * Refuses a request of a team whose money budget for this month is used up.
   *
   * @throws GatewayException 429 {@code insufficient_quota} with {@code Retry-After} until the month resets
   */
  public void checkBudget(Caller caller) {
    SpendConfig.TeamBudgetConfig budget = settings.spend().teams().get(caller.team());
    if (budget == null) {
      return;
    }
    String month = month();
    double spent = store.teamSpend(month, caller.team()) / NANOS_PER_USD;
    if (spent >= budget.monthlyUsd()) {
      Counter.builder("spillway.spend.refused")
          .description("Requests refused because their team's money budget for the month is used up")
          .tag("tier", caller.tier().tag()).register(meters).increment();
      QuotaCalendar cal = calendar.get();
      throw ErrorKind.QUOTA_EXCEEDED.exception("The team '" + caller.team() + "' has used its money"
          + " budget for " + month + " (" + SpendAlerts.usd(spent) + " of " + SpendAlerts.usd(budget.monthlyUsd())
          + " USD). It resets at " + cal.resetAt() + ".").withRetryAfter(cal.untilReset());
    }
  }

  /**
   * Records what a settled request cost and returns it in USD.
   *
   * @param backend the kind of backend that served it (the cloud is priced; anything else costs 0)
   * @param model the model the request named when it was sent (after shaping)
   */
  public double record(Caller caller, BackendKind backend, String model, TokenUsage usage) {
    Settings s = settings;
    boolean cloud = backend == BackendKind.CLOUD;
    String priced = s.prices().pricedName(model);
    long nanos = cloud && priced != null ? s.prices().costNanos(priced, usage) : 0L;
    double cost = nanos / NANOS_PER_USD;
    String month = month();
    Tier tier = caller.tier();
    boolean unpriced = cloud && priced == null;
    if (nanos > 0 || unpriced) {
      // A free answer (local, or a price of 0) adds nothing: no store write.
      store.addSpend(month, caller.team(), tier, nanos, unpriced);
    }
    if (unpriced) {
      Counter.builder("spillway.spend.unpriced")
          .description("Cloud requests whose model has no price in spend.prices (counted as costing 0)")
          .tag("tier", tier.tag()).register(meters).increment();
    }
    Counter.builder("spillway.spend.usd")
        .description("Money spent on settled requests, USD, by the price table")
        .tag("tier", tier.tag())
        .tag("backend", (cloud ? BackendKind.CLOUD : BackendKind.LOCAL).tag())
        .tag("model", priced != null ? priced : OTHER_MODEL)
        .register(meters)
        .increment(cost);
    if (nanos > 0) {
      announceBands(s, month, caller.team());
    }
    return cost;
  }

  private void announceBands(Settings s, String month, String team) {
    SpendConfig.TeamBudgetConfig budget = s.spend().teams().get(team);
    if (budget == null) {
      return;
    }
    double spent = store.teamSpend(month, team) / NANOS_PER_USD;
    double limit = budget.monthlyUsd();
    Band band = band(spent, limit, s.alertAt(), s.softAt());
    QuotaCalendar cal = calendar.get();
    for (Band b : Band.values()) {
      if (b == Band.OK || b.compareTo(band) > 0 || !store.claimSpendAlert(month, team, b.tag())) {
        continue;
      }
      s.alerts().announce(new SpendAlerts.Alert(team, b, threshold(s, b), month, spent, limit, cal.resetAt(),
          cal.now()));
    }
  }

  private static Band band(double spent, double limit, double alertAt, double softAt) {
    if (spent >= limit) {
      return Band.HARD;
    }
    double ratio = spent / limit;
    return ratio >= softAt ? Band.SOFT : ratio >= alertAt ? Band.ALERT : Band.OK;
  }

  private static double threshold(Settings s, Band band) {
    return switch (band) {
      case OK -> 0.0;
      case ALERT -> s.alertAt();
      case SOFT -> s.softAt();
      case HARD -> 1.0;
    };
  }

  /** USD spent this month by {@code team}, all tiers. */
  public double spent(String team) {
    return store.teamSpend(month(), team) / NANOS_PER_USD;
  }

  /** The {@code spend} part of {@code GET /admin/quota}: this month per tier and per team. */
  public ObjectNode report() {
    Settings s = settings;
    String month = month();
    MonthSpend m = store.spend(month);
    ObjectNode root = Json.object();
    root.put("month", month);
    root.put("currency", "USD");
    root.put("store", store.status().kind());
    root.put("defaultPricesAsOf", SpendConfig.DEFAULT_PRICES_AS_OF);
    root.put("pricedModels", s.prices().size());
    Map<Tier, Double> tiers = new TreeMap<>();
    for (Tier tier : Tier.values()) {
      tiers.put(tier, 0.0);
    }
    ObjectNode teams = Json.object();
    Set<String> names = new TreeSet<>(m.nanosByTeam().keySet());
    names.addAll(s.spend().teams().keySet());
    double total = 0;
    for (String team : names) {
      ObjectNode node = teams.putObject(team);
      ObjectNode byTier = node.putObject("byTier");
      double teamTotal = 0;
      for (Map.Entry<Tier, Long> e : new TreeMap<>(m.nanosByTeam().getOrDefault(team, Map.of())).entrySet()) {
        double usd = e.getValue() / NANOS_PER_USD;
        byTier.put(e.getKey().tag(), usd);
        tiers.merge(e.getKey(), usd, Double::sum);
        teamTotal += usd;
      }
      node.put("usd", teamTotal);
      total += teamTotal;
      SpendConfig.TeamBudgetConfig budget = s.spend().teams().get(team);
      if (budget != null) {
        node.put("monthlyUsd", budget.monthlyUsd());
        node.put("usageRatio", budget.monthlyUsd() == 0 ? 1.0 : teamTotal / budget.monthlyUsd());
        node.put("band", band(teamTotal, budget.monthlyUsd(), s.alertAt(), s.softAt()).tag());
      }
    }
    root.put("usd", total);
    ObjectNode tierNode = root.putObject("tiers");
    tiers.forEach((tier, usd) -> tierNode.putObject(tier.tag()).put("usd", usd)
        .put("unpricedRequests", m.unpriced(tier)));
    root.set("teams", teams);
    return root;
  }

  @Override
  public void close() {
    settings.alerts().close();
  }
}
