package io.spillway.quota.store;

import io.lettuce.core.KeyValue;
import io.lettuce.core.ScriptOutputType;
import io.spillway.redis.RedisScript;
import io.spillway.redis.RedisSession;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The token ledger in Redis: reservations and settlements are Lua scripts, so "does this fit under
 * the ceiling" and the taking of the tokens are one atomic step, and N replicas together never admit
 * more than a pool's ceiling. Every call goes to Redis and throws what {@link RedisSession} throws;
 * riding out an outage is {@link RedisUsageStore}'s.
 */
final class RedisLedger {
  private static final RedisScript RESERVE = RedisScript.load(RedisLedger.class, "reserve.lua");
  private static final RedisScript SETTLE = RedisScript.load(RedisLedger.class, "settle.lua");

  /** A script's answer: whether it applied, and the pool's counters after it. */
  record Reply(boolean applied, PoolUsage usage) {}

  private final RedisSession redis;
  private final RedisQuotaKeys keys;

  RedisLedger(RedisSession redis, RedisQuotaKeys keys) {
    this.redis = redis;
    this.keys = keys;
  }

  /** Takes {@code hold} if it fits under {@code ceiling} (the pool's, less what Redis does not know yet). */
  Reply reserve(Hold hold, long ceiling) {
    PoolKey pool = hold.pool();
    long now = keys.now();
    List<Object> result = redis.eval(RESERVE, ScriptOutputType.MULTI,
        new String[] {RedisQuotaKeys.pool(pool), RedisQuotaKeys.holds(pool)},
        Long.toString(hold.tokens()), Long.toString(ceiling), member(hold), Long.toString(now + keys.holdMillis()),
        Long.toString(now), Long.toString(keys.keepMillis(pool.month())));
    return reply(result);
  }

  /** Settles {@code hold} at {@code actual} tokens, once however often it is sent (its marker). */
  Reply settle(Hold hold, long actual) {
    PoolKey pool = hold.pool();
    String[] k = {RedisQuotaKeys.pool(pool), RedisQuotaKeys.holds(pool), RedisQuotaKeys.teams(pool.month()),
        RedisQuotaKeys.settled(pool.month(), hold.id())};
    List<Object> result = redis.eval(SETTLE, ScriptOutputType.MULTI, k, member(hold), Long.toString(hold.tokens()),
        Long.toString(actual), hold.team(), Long.toString(keys.markerMillis()),
        Long.toString(keys.keepMillis(pool.month())));
    return reply(result);
  }

  PoolUsage usage(PoolKey pool) {
    List<KeyValue<String, String>> values = redis.call(r -> r.hmget(RedisQuotaKeys.pool(pool), "used", "reserved"));
    return new PoolUsage(longValue(values.get(0)), longValue(values.get(1)));
  }

  Map<String, Long> teamUsage(String month) {
    Map<String, Long> parsed = new TreeMap<>();
    redis.call(r -> r.hgetall(RedisQuotaKeys.teams(month))).forEach((team, used) -> parsed.put(team, Long.parseLong(used)));
    return parsed;
  }

  /** Whether this call announced {@code band} of the pool first (fleet-wide). */
  boolean claimAlert(PoolKey pool, String band) {
    String key = RedisQuotaKeys.alerts(pool.month());
    long keep = keys.keepMillis(pool.month());
    return redis.call(r -> {
      long n = r.sadd(key, pool.tier().tag() + "|" + band);
      r.pexpire(key, keep);
      return n;
    }) == 1;
  }

  private static Reply reply(List<Object> result) {
    return new Reply(asLong(result.get(0)) == 1, new PoolUsage(asLong(result.get(1)), asLong(result.get(2))));
  }

  static long asLong(Object value) {
    return Long.parseLong(String.valueOf(value));
  }

  static long longValue(KeyValue<String, String> value) {
    return value.hasValue() ? Long.parseLong(value.getValue()) : 0;
  }

  private static String member(Hold hold) {
    return hold.id() + "|" + hold.tokens();
  }
}
