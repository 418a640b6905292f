package io.spillway.quota.store;

import java.util.Map;

/**
 * Where the month's token usage lives: {@code memory} (tests), {@code embedded:<dir>} (a durable
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

  StoreStatus status();

  /** Writes everything still buffered and releases files and connections. */
  @Override
  void close();
}
