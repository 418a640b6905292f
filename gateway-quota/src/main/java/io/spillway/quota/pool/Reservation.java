package io.spillway.quota.pool;

import io.spillway.core.pipeline.Tier;
import io.spillway.quota.store.Hold;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Tokens held in a pool for one running request. Ends exactly once: the first {@link #settle} or
 * {@link #release} wins and later calls do nothing, from any thread (a stream may end on the
 * request's thread while a client disconnect closes it from another).
 */
public final class Reservation {
  private final QuotaPools pools;
  private final Hold hold;
  private final Tier tier;
  private final String keyId;
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile Consumer<TokenUsage> onSettled = usage -> {};

  Reservation(QuotaPools pools, Hold hold, Tier tier, String keyId) {
    this.pools = pools;
    this.hold = hold;
    this.tier = tier;
    this.keyId = keyId;
  }

  /** The caller's key, whose own budget (if any) the usage also counts toward. */
  String keyId() {
    return keyId;
  }

  public Tier tier() {
    return tier;
  }

  /** The estimate that was reserved. */
  public long estimatedTokens() {
    return hold.tokens();
  }

  /**
   * Runs {@code listener} with the usage once this reservation is settled (not when released), on
   * the settling thread. Set it before the request runs; a later call replaces it.
   */
  public Reservation onSettled(Consumer<TokenUsage> listener) {
    this.onSettled = listener;
    return this;
  }

  /** Replaces the estimate with what the request really used. Returns false if already ended. */
  public boolean settle(TokenUsage usage) {
    if (!ended.compareAndSet(false, true)) {
      return false;
    }
    pools.settle(this, hold, usage);
    onSettled.accept(usage);
    return true;
  }

  /** Gives the reservation back without usage (the request failed before it cost anything). */
  public boolean release() {
    if (!ended.compareAndSet(false, true)) {
      return false;
    }
    pools.settle(this, hold, null);
    return true;
  }

  public boolean ended() {
    return ended.get();
  }
}
