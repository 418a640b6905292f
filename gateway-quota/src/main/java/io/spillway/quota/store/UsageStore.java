package io.spillway.quota.store;

import io.spillway.core.pipeline.Tier;
import java.util.Map;

/**
 * Where the month's token usage and spend live: {@code memory} (tests), {@code embedded:<dir>} (a durable
 * file, the default) or {@code redis://host:port} (shared by every replica). Create one with
 * {@link UsageStores#open}.
 *
 * <p>All methods are thread-safe and may block briefly (a file flush is never on this path; a Redis
 * call is bounded by {@code quota.storeTimeout}). {@link #reserve} is atomic: however many threads or
 * replicas call it at once, a pool's {@code used + reserved} never passes the ceiling it is given.
 */
public interface UsageStore extends AutoCloseable {
  /**
   * Holds {@code tokens} in {@code pool} for a request of {@code team}, unless
   * {@code used + reserved + tokens} would pass {@code ceiling}.
   *
   * @throws StoreUnavailableException when a shared store is unreachable and configured to fail closed
   */
  ReserveOutcome reserve(PoolKey pool, String team, long tokens, long ceiling);

  /**
   * Ends a hold: frees its reservation and adds {@code actualTokens} (0 to release without usage)
   * to the pool's and the team's usage. Call exactly once per hold. Never loses usage: when a shared
   * store is unreachable the settlement is kept and written back when it returns.
   */
  PoolUsage settle(Hold hold, long actualTokens);

  /** The pool's counters now. */
  PoolUsage usage(PoolKey pool);

  /** Tokens used per team in {@code month}. */
  Map<String, Long> teamUsage(String month);

  /**
   * Claims the right to announce that {@code pool} reached {@code band}: true exactly once per pool,
   * band and month (across replicas for a shared store, across restarts for a durable one).
   */
  boolean claimAlert(PoolKey pool, String band);

  /**
   * Adds what a settled request cost to {@code team}'s spend in {@code tier} for {@code month}:
   * additive and atomic (many replicas may add at once), in nano-dollars. {@code unpriced} counts a
   * cloud request whose model had no price. Never loses an amount: when a shared store is
   * unreachable it is kept and written back when the store returns, as settlements are.
   */
  void addSpend(String month, String team, Tier tier, long nanos, boolean unpriced);

  /** The spend of {@code month}, per team and tier (for a shared store: every replica's). */
  MonthSpend spend(String month);

  /** Nano-dollars {@code team} spent in {@code month}, all tiers. */
  default long teamSpend(String month, String team) {
    return spend(month).team(team);
  }

  /**
   * Claims the right to announce that {@code team}'s money budget reached {@code band} in
   * {@code month}: true exactly once, as {@link #claimAlert}.
   */
  boolean claimSpendAlert(String month, String team, String band);

  StoreStatus status();

  /**
   * Whether its calls may wait on the network (Redis): the stages that use it then run on a virtual
   * thread instead of the event loop. An in-process store answers from memory and says false.
   */
  default boolean blocking() {
    return false;
  }

  /** Writes everything still buffered and releases files and connections. */
  @Override
  void close();
}
