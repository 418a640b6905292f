package io.spillway.quota.store;

import io.spillway.core.pipeline.Tier;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * Usage in this process only: nothing survives a restart. The store for tests and throwaway runs,
 * and the ledger that the embedded and Redis stores keep in memory.
 *
 * <p>Each pool's counters are guarded by their own monitor, so a reservation checks and takes its
 * tokens in one step; pools never contend with each other.
 */
public final class MemoryUsageStore implements UsageStore {
  private static final class Counter {
    long used;
    long reserved;

    PoolUsage snapshot() {
      return new PoolUsage(used, reserved);
    }
  }

  private final ConcurrentHashMap<PoolKey, Counter> pools = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<String, ConcurrentHashMap<String, AtomicLong>> teams = new ConcurrentHashMap<>();
  private final Set<String> alerts = ConcurrentHashMap.newKeySet();
  /** month → team → tier → nano-dollars. */
  private final ConcurrentHashMap<String, ConcurrentHashMap<String, ConcurrentHashMap<Tier, AtomicLong>>> spend =
      new ConcurrentHashMap<>();
  /** month → tier → unpriced requests. */
  private final ConcurrentHashMap<String, ConcurrentHashMap<Tier, AtomicLong>> unpriced = new ConcurrentHashMap<>();
  private final AtomicLong changes = new AtomicLong();

  @Override
  public ReserveOutcome reserve(PoolKey pool, String team, long tokens, long ceiling) {
    Counter counter = counter(pool);
    synchronized (counter) {
      if (Saturating.add(Saturating.add(counter.used, counter.reserved), tokens) > ceiling) {
        return new ReserveOutcome(null, counter.snapshot());
      }
      counter.reserved = Saturating.add(counter.reserved, tokens);
      return new ReserveOutcome(Hold.create(pool, team, tokens), counter.snapshot());
    }
  }

  @Override
  public PoolUsage settle(Hold hold, long actualTokens) {
    Counter counter = counter(hold.pool());
    PoolUsage after;
    synchronized (counter) {
      counter.reserved = Saturating.add(counter.reserved, -hold.tokens());
      counter.used = Saturating.add(counter.used, actualTokens);
      after = counter.snapshot();
    }
    if (actualTokens != 0) {
      addTeamUsage(hold.pool().month(), hold.team(), actualTokens);
      changes.incrementAndGet();
    }
    return after;
  }

  /** Adds (or, negative, takes back) settled usage without a hold: loading a file, replaying. */
  void addUsage(PoolKey pool, String team, long tokens) {
    Counter counter = counter(pool);
    synchronized (counter) {
      counter.used = Saturating.add(counter.used, tokens);
    }
    if (team != null) {
      addTeamUsage(pool.month(), team, tokens);
    }
    changes.incrementAndGet();
  }

  /** Adds team usage only (loading a file, where pool totals are loaded separately). */
  void addTeamOnly(String month, String team, long tokens) {
    addTeamUsage(month, team, tokens);
  }

  private void addTeamUsage(String month, String team, long tokens) {
    teams.computeIfAbsent(month, m -> new ConcurrentHashMap<>())
        .computeIfAbsent(team, t -> new AtomicLong())
        .accumulateAndGet(tokens, Saturating::add);
  }

  @Override
  public PoolUsage usage(PoolKey pool) {
    Counter counter = pools.get(pool);
    if (counter == null) {
      return PoolUsage.ZERO;
    }
    synchronized (counter) {
      return counter.snapshot();
    }
  }

  @Override
  public Map<String, Long> teamUsage(String month) {
    Map<String, AtomicLong> byTeam = teams.get(month);
    Map<String, Long> result = new TreeMap<>();
    if (byTeam != null) {
      byTeam.forEach((team, used) -> {
        if (used.get() != 0) {
          result.put(team, used.get());
        }
      });
    }
    return result;
  }

  @Override
  public boolean claimAlert(PoolKey pool, String band) {
    boolean claimed = alerts.add(alertKey(pool, band));
    if (claimed) {
      changes.incrementAndGet();
    }
    return claimed;
  }

  static String alertKey(PoolKey pool, String band) {
    return pool.month() + "|" + pool.tier().tag() + "|" + band;
  }

  @Override
  public void addSpend(String month, String team, Tier tier, long nanos, boolean unpricedRequest) {
    addSpendOnly(month, team, tier, nanos);
    if (unpricedRequest) {
      addUnpriced(month, tier, 1);
    }
  }

  /** Adds (or, negative, takes back) spend: a request, a loaded file, a written-back amount. */
  void addSpendOnly(String month, String team, Tier tier, long nanos) {
    spend.computeIfAbsent(month, m -> new ConcurrentHashMap<>())
        .computeIfAbsent(team, t -> new ConcurrentHashMap<>())
        .computeIfAbsent(tier, t -> new AtomicLong())
        .accumulateAndGet(nanos, Saturating::add);
    changes.incrementAndGet();
  }

  void addUnpriced(String month, Tier tier, long requests) {
    unpriced.computeIfAbsent(month, m -> new ConcurrentHashMap<>())
        .computeIfAbsent(tier, t -> new AtomicLong())
        .accumulateAndGet(requests, Saturating::add);
    changes.incrementAndGet();
  }

  @Override
  public MonthSpend spend(String month) {
    Map<String, Map<Tier, Long>> teams = new TreeMap<>();
    spend.getOrDefault(month, new ConcurrentHashMap<>()).forEach((team, tiers) -> tiers.forEach((tier, nanos) -> {
      if (nanos.get() != 0) {
        teams.computeIfAbsent(team, t -> new EnumMap<>(Tier.class)).put(tier, nanos.get());
      }
    }));
    Map<Tier, Long> unpricedByTier = new EnumMap<>(Tier.class);
    unpriced.getOrDefault(month, new ConcurrentHashMap<>()).forEach((tier, n) -> {
      if (n.get() != 0) {
        unpricedByTier.put(tier, n.get());
      }
    });
    return new MonthSpend(teams, unpricedByTier);
  }

  @Override
  public boolean claimSpendAlert(String month, String team, String band) {
    boolean claimed = alerts.add(spendAlertKey(month, team, band));
    if (claimed) {
      changes.incrementAndGet();
    }
    return claimed;
  }

  static String spendAlertKey(String month, String team, String band) {
    return "spend|" + month + "|" + team + "|" + band;
  }

  void forEachSpend(SpendConsumer action) {
    spend.forEach((month, teams) -> teams.forEach((team, tiers) ->
        tiers.forEach((tier, nanos) -> action.accept(month, team, tier, nanos.get()))));
  }

  void forEachUnpriced(SpendConsumer action) {
    unpriced.forEach((month, tiers) -> tiers.forEach((tier, n) -> action.accept(month, null, tier, n.get())));
  }

  @FunctionalInterface
  interface SpendConsumer {
    /** @param team null for unpriced request counts */
    void accept(String month, String team, Tier tier, long value);
  }

  /** Marks an alert as already sent (loading a file). */
  void markAlert(String alertKey) {
    alerts.add(alertKey);
  }

  /** A counter that moves on every change that a durable copy must write. */
  long changes() {
    return changes.get();
  }

  void forEachPoolUsed(BiConsumer<PoolKey, Long> action) {
    pools.forEach((key, counter) -> {
      long used;
      synchronized (counter) {
        used = counter.used;
      }
      action.accept(key, used);
    });
  }

  void forEachTeamUsed(TeamUsageConsumer action) {
    teams.forEach((month, byTeam) -> byTeam.forEach((team, used) -> action.accept(month, team, used.get())));
  }

  Set<String> alerts() {
    return Set.copyOf(alerts);
  }

  @FunctionalInterface
  interface TeamUsageConsumer {
    void accept(String month, String team, long used);
  }

  private Counter counter(PoolKey pool) {
    return pools.computeIfAbsent(pool, k -> new Counter());
  }

  @Override
  public StoreStatus status() {
    return new StoreStatus("memory", "this process", true, 0);
  }

  @Override
  public void close() {}
}
