package io.spillway.quota.store;

import io.spillway.core.pipeline.Tier;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Usage in this process only: nothing survives a restart. The store for tests and throwaway runs,
 * and the ledger that the embedded and Redis stores keep in memory.
 *
 * <p>Each pool's counters are guarded by their own monitor, so a reservation checks and takes its
 * tokens in one step; pools never contend with each other.
 *
 * <p>A change that moves several counters (a settle moves its pool's and its team's) happens under
 * the shared side of one read-write lock, and {@link #cut} copies every counter under its exclusive
 * side: a durable copy written from a cut never holds a pool total its teams do not add up to, even
 * when the process dies right after it.
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
  private final ReentrantReadWriteLock cutLock = new ReentrantReadWriteLock();
  /** Held while a change moves counters; many changes run at once, never during a {@link #cut}. */
  private final Lock changing = cutLock.readLock();

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
    changing.lock();
    try {
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
    } finally {
      changing.unlock();
    }
  }

  /** Adds (or, negative, takes back) settled usage without a hold: loading a file, replaying. */
  void addUsage(PoolKey pool, String team, long tokens) {
    Counter counter = counter(pool);
    changing.lock();
    try {
      synchronized (counter) {
        counter.used = Saturating.add(counter.used, tokens);
      }
      if (team != null) {
        addTeamUsage(pool.month(), team, tokens);
      }
      changes.incrementAndGet();
    } finally {
      changing.unlock();
    }
  }

  /** Adds team usage only (loading a file, where pool totals are loaded separately). */
  void addTeamOnly(String month, String team, long tokens) {
    changing.lock();
    try {
      addTeamUsage(month, team, tokens);
    } finally {
      changing.unlock();
    }
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
    return claim(alertKey(pool, band));
  }

  private boolean claim(String alertKey) {
    changing.lock();
    try {
      boolean claimed = alerts.add(alertKey);
      if (claimed) {
        changes.incrementAndGet();
      }
      return claimed;
    } finally {
      changing.unlock();
    }
  }

  static String alertKey(PoolKey pool, String band) {
    return pool.month() + "|" + pool.tier().tag() + "|" + band;
  }

  @Override
  public void addSpend(String month, String team, Tier tier, long nanos, boolean unpricedRequest) {
    changing.lock();
    try {
      addSpendOnly(month, team, tier, nanos);
      if (unpricedRequest) {
        addUnpriced(month, tier, 1);
      }
    } finally {
      changing.unlock();
    }
  }

  /** Adds (or, negative, takes back) spend: a request, a loaded file, a written-back amount. */
  void addSpendOnly(String month, String team, Tier tier, long nanos) {
    changing.lock();
    try {
      spend.computeIfAbsent(month, m -> new ConcurrentHashMap<>())
          .computeIfAbsent(team, t -> new ConcurrentHashMap<>())
          .computeIfAbsent(tier, t -> new AtomicLong())
          .accumulateAndGet(nanos, Saturating::add);
      changes.incrementAndGet();
    } finally {
      changing.unlock();
    }
  }

  void addUnpriced(String month, Tier tier, long requests) {
    changing.lock();
    try {
      unpriced.computeIfAbsent(month, m -> new ConcurrentHashMap<>())
          .computeIfAbsent(tier, t -> new AtomicLong())
          .accumulateAndGet(requests, Saturating::add);
      changes.incrementAndGet();
    } finally {
      changing.unlock();
    }
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
    return claim(spendAlertKey(month, team, band));
  }

  static String spendAlertKey(String month, String team, String band) {
    return "spend|" + month + "|" + team + "|" + band;
  }

  /** Marks an alert as already sent (loading a file). */
  void markAlert(String alertKey) {
    changing.lock();
    try {
      alerts.add(alertKey);
    } finally {
      changing.unlock();
    }
  }

  /** A counter that moves on every change that a durable copy must write. */
  long changes() {
    return changes.get();
  }

  /**
   * Every counter a durable copy writes, copied at one instant: no change is half in it (a settle's
   * pool total without its team's share). Changes wait while it copies, which takes microseconds.
   */
  LedgerCut cut() {
    Lock exclusive = cutLock.writeLock();
    exclusive.lock();
    try {
      Map<PoolKey, Long> poolUsed = new HashMap<>();
      pools.forEach((key, counter) -> {
        synchronized (counter) {
          poolUsed.put(key, counter.used);
        }
      });
      Map<String, Map<String, Long>> teamUsed = new TreeMap<>();
      teams.forEach((month, byTeam) -> byTeam.forEach((team, used) ->
          teamUsed.computeIfAbsent(month, m -> new TreeMap<>()).put(team, used.get())));
      Map<String, Map<String, Map<Tier, Long>>> spendNanos = new TreeMap<>();
      spend.forEach((month, byTeam) -> byTeam.forEach((team, tiers) -> tiers.forEach((tier, nanos) ->
          spendNanos.computeIfAbsent(month, m -> new TreeMap<>())
              .computeIfAbsent(team, t -> new EnumMap<>(Tier.class))
              .put(tier, nanos.get()))));
      Map<String, Map<Tier, Long>> unpricedRequests = new TreeMap<>();
      unpriced.forEach((month, tiers) -> tiers.forEach((tier, n) ->
          unpricedRequests.computeIfAbsent(month, m -> new EnumMap<>(Tier.class)).put(tier, n.get())));
      return new LedgerCut(changes.get(), poolUsed, teamUsed, spendNanos, unpricedRequests, Set.copyOf(alerts));
    } finally {
      exclusive.unlock();
    }
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
