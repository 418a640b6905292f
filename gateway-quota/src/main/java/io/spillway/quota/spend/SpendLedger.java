package io.spillway.quota.spend;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.QuotaConfig;
import io.spillway.config.SpendConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.quota.pool.Band;
import io.spillway.quota.pool.QuotaCalendar;
import io.spillway.quota.pool.TokenUsage;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.DoubleAdder;
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
 * <p>The amounts live in this replica's memory: they start from 0 when the process starts and are
 * not shared between replicas (token usage, in the usage store, is). Thread-safe.
 */
public final class SpendLedger implements AutoCloseable {
  private static final String CLOUD = "cloud";
  private static final String OTHER_MODEL = "other";

  private record Settings(PriceTable prices, SpendConfig spend, double alertAt, double softAt, SpendAlerts alerts,
      String webhook, Duration webhookTimeout) {}

  /** One month's amounts; a new month starts a new one. */
  private static final class Month {
    final String name;
    final Map<String, Map<Tier, DoubleAdder>> byTeam = new ConcurrentHashMap<>();
    final Map<Tier, AtomicLong> unpriced = new ConcurrentHashMap<>();
    final Set<String> announced = ConcurrentHashMap.newKeySet();

    Month(String name) {
      this.name = name;
    }

    double team(String team) {
      Map<Tier, DoubleAdder> tiers = byTeam.get(team);
      return tiers == null ? 0 : tiers.values().stream().mapToDouble(DoubleAdder::sum).sum();
    }
  }

  private final Supplier<QuotaCalendar> calendar;
  private final MeterRegistry meters;
  private volatile Settings settings;
  private volatile Month month;

  /**
   * @param calendar the quota pools' calendar (its month and time zone); read on every call so a
   *     reloaded {@code quota.timezone} applies
   */
  public SpendLedger(SpendConfig spend, QuotaConfig quota, Supplier<QuotaCalendar> calendar, MeterRegistry meters) {
    this.calendar = calendar;
    this.meters = meters;
    this.settings = settings(spend, quota, null);
    this.month = new Month(calendar.get().month().toString());
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

  private Month current() {
    String name = calendar.get().month().toString();
    Month m = month;
    if (!m.name.equals(name)) {
      synchronized (this) {
        if (!month.name.equals(name)) {
          month = new Month(name);
        }
        m = month;
      }
    }
    return m;
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
    Month m = current();
    double spent = m.team(caller.team());
    if (spent >= budget.monthlyUsd()) {
      Counter.builder("spillway.spend.refused")
          .description("Requests refused because their team's money budget for the month is used up")
          .tag("tier", caller.tier().tag()).register(meters).increment();
      QuotaCalendar cal = calendar.get();
      throw ErrorKind.QUOTA_EXCEEDED.exception("The team '" + caller.team() + "' has used its money"
          + " budget for " + m.name + " (" + SpendAlerts.usd(spent) + " of " + SpendAlerts.usd(budget.monthlyUsd())
          + " USD). It resets at " + cal.resetAt() + ".").withRetryAfter(cal.untilReset());
    }
  }

  /**
   * Records what a settled request cost and returns it in USD.
   *
   * @param backend the backend that served it ({@code cloud} is priced; anything else costs 0)
   * @param model the model the request named when it was sent (after shaping)
   */
  public double record(Caller caller, String backend, String model, TokenUsage usage) {
    Settings s = settings;
    boolean cloud = CLOUD.equals(backend);
    String priced = s.prices().pricedName(model);
    double cost = cloud && priced != null ? s.prices().cost(priced, usage) : 0.0;
    Month m = current();
    Tier tier = caller.tier();
    m.byTeam.computeIfAbsent(caller.team(), t -> new ConcurrentHashMap<>())
        .computeIfAbsent(tier, t -> new DoubleAdder()).add(cost);
    if (cloud && priced == null) {
      m.unpriced.computeIfAbsent(tier, t -> new AtomicLong()).incrementAndGet();
      Counter.builder("spillway.spend.unpriced")
          .description("Cloud requests whose model has no price in spend.prices (counted as costing 0)")
          .tag("tier", tier.tag()).register(meters).increment();
    }
    Counter.builder("spillway.spend.usd")
        .description("Money spent on settled requests, USD, by the price table")
        .tag("tier", tier.tag())
        .tag("backend", cloud ? CLOUD : "local")
        .tag("model", priced != null ? priced : OTHER_MODEL)
        .register(meters)
        .increment(cost);
    if (cost > 0) {
      announceBands(s, m, caller.team());
    }
    return cost;
  }

  private void announceBands(Settings s, Month m, String team) {
    SpendConfig.TeamBudgetConfig budget = s.spend().teams().get(team);
    if (budget == null) {
      return;
    }
    double spent = m.team(team);
    double limit = budget.monthlyUsd();
    Band band = band(spent, limit, s.alertAt(), s.softAt());
    QuotaCalendar cal = calendar.get();
    for (Band b : Band.values()) {
      if (b == Band.OK || b.compareTo(band) > 0 || !m.announced.add(team + "|" + b.tag())) {
        continue;
      }
      s.alerts().announce(new SpendAlerts.Alert(team, b, threshold(s, b), m.name, spent, limit, cal.resetAt(),
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
    return current().team(team);
  }

  /** The {@code spend} part of {@code GET /admin/quota}: this month per tier and per team. */
  public ObjectNode report() {
    Settings s = settings;
    Month m = current();
    ObjectNode root = Json.object();
    root.put("month", m.name);
    root.put("currency", "USD");
    root.put("scope", "replica");
    root.put("defaultPricesAsOf", SpendConfig.DEFAULT_PRICES_AS_OF);
    root.put("pricedModels", s.prices().size());
    Map<Tier, Double> tiers = new TreeMap<>();
    for (Tier tier : Tier.values()) {
      tiers.put(tier, 0.0);
    }
    ObjectNode teams = Json.object();
    Set<String> names = new TreeSet<>(m.byTeam.keySet());
    names.addAll(s.spend().teams().keySet());
    double total = 0;
    for (String team : names) {
      ObjectNode node = teams.putObject(team);
      ObjectNode byTier = node.putObject("byTier");
      double teamTotal = 0;
      for (Map.Entry<Tier, DoubleAdder> e : m.byTeam.getOrDefault(team, Map.of()).entrySet()) {
        double usd = e.getValue().sum();
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
        .put("unpricedRequests", m.unpriced.getOrDefault(tier, new AtomicLong()).get()));
    root.set("teams", teams);
    return root;
  }

  @Override
  public void close() {
    settings.alerts().close();
  }
}
