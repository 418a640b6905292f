package io.spillway.quota.store;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Tokens reserved in a pool for one running request, to be settled (or released) exactly once
 * through the store that made it. Immutable.
 */
public final class Hold {
  private final String id;
  private final PoolKey pool;
  private final String team;
  private final long tokens;
  private final boolean local;

  Hold(String id, PoolKey pool, String team, long tokens, boolean local) {
    this.id = id;
    this.pool = pool;
    this.team = team;
    this.tokens = tokens;
    this.local = local;
  }

  static Hold create(PoolKey pool, String team, long tokens) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    String id = Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
    return new Hold(id, pool, team, tokens, false);
  }

  /** A unique id; the Redis store uses it to settle idempotently. */
  public String id() {
    return id;
  }

  public PoolKey pool() {
    return pool;
  }

  public String team() {
    return team;
  }

  /** The tokens held: the request's estimate. */
  public long tokens() {
    return tokens;
  }

  /** Whether the hold lives only in this process (made while a shared store was unreachable). */
  boolean local() {
    return local;
  }

  Hold asLocal() {
    return new Hold(id, pool, team, tokens, true);
  }

  @Override
  public String toString() {
    return "Hold{" + pool + ", team=" + team + ", tokens=" + tokens + (local ? ", local" : "") + "}";
  }
}
