package io.spillway.quota.store;

import io.spillway.redis.RedisCommandException;
import io.spillway.redis.RedisUnavailableException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a replica counted while Redis was away, queued in order and written back once it answers:
 * settlements (each under its hold's once-only marker) and spend amounts (each under its own id), so
 * an entry sent again after a reply was lost counts once. While queued an entry also counts in the
 * replica's local store; written back, it is taken out of there.
 *
 * <p>Thread-safe.
 */
final class OutageReplay {
  private static final Logger log = LoggerFactory.getLogger(OutageReplay.class);
  /** A settlement not yet in Redis. */
  record Settlement(Hold hold, long actual) {}

  private final Queue<Settlement> settlements = new ConcurrentLinkedQueue<>();
  private final Queue<RedisSpend.Amount> spends = new ConcurrentLinkedQueue<>();
  private final MemoryUsageStore local;

  OutageReplay(MemoryUsageStore local) {
    this.local = local;
  }

  /**
   * Queues a settlement; its tokens count locally meanwhile. A hold whose reservation may or may
   * not have reached Redis is queued at 0 tokens, which frees it there.
   */
  void settlement(Hold hold, long actual) {
    settlements.add(new Settlement(hold, actual));
    if (actual != 0) {
      local.addUsage(hold.pool(), hold.team(), actual);
    }
  }

  /** Queues a spend amount; it counts locally meanwhile. */
  void spend(RedisSpend.Amount amount) {
    spends.add(amount);
    local.addSpend(amount.month(), amount.team(), amount.tier(), amount.nanos(), amount.unpriced());
  }

  boolean isEmpty() {
    return settlements.isEmpty() && spends.isEmpty();
  }

  int size() {
    return settlements.size() + spends.size();
  }

  /**
   * Writes the queue to Redis, oldest first, and takes each written entry out of the local counts.
   *
   * @throws RedisUnavailableException at the first entry Redis does not take; the rest stay queued
   */
  void drain(RedisLedger ledger, RedisSpend spend) {
    Settlement s;
    while ((s = settlements.peek()) != null) {
      try {
        ledger.settle(s.hold(), s.actual());
      } catch (RedisCommandException e) {
        // Redis refused this entry itself: sending it again would fail again and hold back the rest.
        log.error("The shared quota store refused a queued settlement ({} tokens, team {}); it stays counted on "
            + "this replica only: {}", s.actual(), s.hold().team(), e.getMessage());
        settlements.poll();
        continue;
      }
      settlements.poll();
      if (s.actual() != 0) {
        local.addUsage(s.hold().pool(), s.hold().team(), -s.actual());
      }
    }
    RedisSpend.Amount a;
    while ((a = spends.peek()) != null) {
      try {
        spend.add(a);
      } catch (RedisCommandException e) {
        log.error("The shared quota store refused a queued spend amount ({} nano-dollars, team {}); it stays "
            + "counted on this replica only: {}", a.nanos(), a.team(), e.getMessage());
        spends.poll();
        continue;
      }
      spends.poll();
      local.addSpendOnly(a.month(), a.team(), a.tier(), -a.nanos());
      if (a.unpriced()) {
        local.addUnpriced(a.month(), a.tier(), -1);
      }
    }
  }

  /** Tokens of settlements still queued. */
  long queuedTokens() {
    return settlements.stream().mapToLong(Settlement::actual).sum();
  }

  int queuedSettlements() {
    return settlements.size();
  }

  int queuedSpends() {
    return spends.size();
  }

  long queuedNanos() {
    return spends.stream().mapToLong(RedisSpend.Amount::nanos).sum();
  }
}
