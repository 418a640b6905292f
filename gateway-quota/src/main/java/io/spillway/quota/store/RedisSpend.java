package io.spillway.quota.store;

import io.lettuce.core.KeyValue;
import io.lettuce.core.ScriptOutputType;
import io.spillway.core.pipeline.Tier;
import io.spillway.redis.RedisScript;
import io.spillway.redis.RedisSession;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Spend (nano-dollars per team and tier) in Redis: each amount added by one script under a once-only
 * marker, so an amount replayed after an outage counts once. Every call goes to Redis and throws
 * what {@link RedisSession} throws.
 */
final class RedisSpend {
  private static final RedisScript SPEND = RedisScript.load(RedisSpend.class, "spend.lua");

  /** A spend amount; {@code id} makes its write count once however often it is sent. */
  record Amount(String id, String month, String team, Tier tier, long nanos, boolean unpriced) {
    MonthSpend asSpend() {
      return new MonthSpend(Map.of(team, Map.of(tier, nanos)), unpriced ? Map.of(tier, 1L) : Map.of());
    }
  }

  private final RedisSession redis;
  private final RedisQuotaKeys keys;

  RedisSpend(RedisSession redis, RedisQuotaKeys keys) {
    this.redis = redis;
    this.keys = keys;
  }

  void add(Amount a) {
    String[] k = {RedisQuotaKeys.spend(a.month()), RedisQuotaKeys.spendUnpriced(a.month()),
        RedisQuotaKeys.settled(a.month(), "spend:" + a.id())};
    redis.eval(SPEND, ScriptOutputType.MULTI, k, a.team() + "|" + a.tier().tag(), Long.toString(a.nanos()),
        a.tier().tag(), a.unpriced() ? "1" : "0", Long.toString(keys.markerMillis()),
        Long.toString(keys.keepMillis(a.month())));
  }

  MonthSpend month(String month) {
    Map<String, String> amounts = redis.call(r -> r.hgetall(RedisQuotaKeys.spend(month)));
    Map<String, String> unpriced = redis.call(r -> r.hgetall(RedisQuotaKeys.spendUnpriced(month)));
    Map<String, Map<Tier, Long>> teams = new TreeMap<>();
    amounts.forEach((field, nanos) -> {
      int bar = field.lastIndexOf('|');
      teams.computeIfAbsent(field.substring(0, bar), t -> new EnumMap<>(Tier.class))
          .put(Tier.parse(field.substring(bar + 1)), Long.parseLong(nanos));
    });
    Map<Tier, Long> unpricedByTier = new EnumMap<>(Tier.class);
    unpriced.forEach((tier, n) -> unpricedByTier.put(Tier.parse(tier), Long.parseLong(n)));
    return new MonthSpend(teams, unpricedByTier);
  }

  /** One team's spend by tier: one HMGET (checked before every request of a team with a budget). */
  Map<Tier, Long> team(String month, String team) {
    Tier[] tiers = Tier.values();
    String[] fields = new String[tiers.length];
    for (int i = 0; i < tiers.length; i++) {
      fields[i] = team + "|" + tiers[i].tag();
    }
    List<KeyValue<String, String>> values = redis.call(r -> r.hmget(RedisQuotaKeys.spend(month), fields));
    Map<Tier, Long> byTier = new EnumMap<>(Tier.class);
    for (int i = 0; i < tiers.length; i++) {
      byTier.put(tiers[i], RedisLedger.longValue(values.get(i)));
    }
    return byTier;
  }

  boolean claimAlert(String month, String team, String band) {
    String key = RedisQuotaKeys.spendAlerts(month);
    long keep = keys.keepMillis(month);
    return redis.call(r -> {
      long n = r.sadd(key, team + "|" + band);
      r.pexpire(key, keep);
      return n;
    }) == 1;
  }
}
