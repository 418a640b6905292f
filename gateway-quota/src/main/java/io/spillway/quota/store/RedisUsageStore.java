package io.spillway.quota.store;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyValue;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.spillway.config.Durations;
import io.spillway.core.pipeline.Tier;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Usage shared by every replica through one Redis. Reservations and settlements are Lua scripts,
 * so the check "does this fit under the ceiling" and the taking of the tokens are one atomic step
 * in Redis: N replicas together never admit more than a pool's ceiling.
 *
 * <p>Keys, per month (all under one hash tag, so a month's keys share a cluster slot):
 * <ul>
 *   <li>{@code {spillway:quota:2026-11}:pool:<tier>}: hash {@code used}, {@code reserved}</li>
 *   <li>{@code {spillway:quota:2026-11}:holds:<tier>}: sorted set of running holds
 *       ({@code <id>|<tokens>}, scored by expiry), so a replica that dies mid-request frees its
 *       reservations when they expire instead of leaking them for the month</li>
 *   <li>{@code {spillway:quota:2026-11}:teams}: hash team → tokens used</li>
 *   <li>{@code {spillway:quota:2026-11}:alerts}: set of bands already announced</li>
 *   <li>{@code {spillway:quota:2026-11}:settled:<id>}: short-lived marker that makes a replayed
 *       settlement (or spend amount) count once</li>
 *   <li>{@code {spillway:quota:2026-11}:spend}: hash {@code <team>|<tier>} → nano-dollars spent</li>
 *   <li>{@code {spillway:quota:2026-11}:spendUnpriced}: hash tier → cloud requests without a price</li>
 *   <li>{@code {spillway:quota:2026-11}:spendAlerts}: set of {@code <team>|<band>} already announced</li>
 * </ul>
 * A month's keys expire {@value #MONTHS_KEPT} months after the month ends.
 *
 * <p>When Redis does not answer within {@code quota.storeTimeout}, the store logs one error for the
 * outage and, unless {@code quota.failClosed}, keeps serving: it reserves against the last counters
 * it saw plus its own local ones, and keeps every settlement in a queue. Every
 * {@code quota.flushInterval} it tries to reconnect; once Redis answers, the queue is written back
 * (each settlement exactly once) and the replica is back on shared counters. While Redis is away,
 * replicas cannot see each other's new usage; that is the price of staying up.
 */
public final class RedisUsageStore implements UsageStore {
  private static final Logger log = LoggerFactory.getLogger(RedisUsageStore.class);
  static final int MONTHS_KEPT = 2;

  static final Script RESERVE = new Script("""
      -- KEYS: pool hash, holds zset. ARGV: tokens, ceiling, member, expires at ms, now ms, keep ms
      local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
      if #expired > 0 then
        local freed = 0
        for _, member in ipairs(expired) do
          freed = freed + tonumber(string.match(member, '|(%d+)$'))
        end
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
        redis.call('HINCRBY', KEYS[1], 'reserved', -freed)
      end
      local used = tonumber(redis.call('HGET', KEYS[1], 'used') or '0')
      local reserved = tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')
      local tokens = tonumber(ARGV[1])
      if used + reserved + tokens > tonumber(ARGV[2]) then
        return {0, used, reserved}
      end
      redis.call('HINCRBY', KEYS[1], 'reserved', tokens)
      redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
      redis.call('PEXPIRE', KEYS[1], ARGV[6])
      redis.call('PEXPIRE', KEYS[2], ARGV[6])
      return {1, used, reserved + tokens}
      """);

  static final Script SETTLE = new Script("""
      -- KEYS: pool hash, holds zset, teams hash, settled marker.
      -- ARGV: member, held tokens, actual tokens, team, marker ms, keep ms
      if not redis.call('SET', KEYS[4], '1', 'NX', 'PX', ARGV[5]) then
        return {0, tonumber(redis.call('HGET', KEYS[1], 'used') or '0'),
                tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')}
      end
      if redis.call('ZREM', KEYS[2], ARGV[1]) == 1 then
        redis.call('HINCRBY', KEYS[1], 'reserved', -tonumber(ARGV[2]))
      end
      local actual = tonumber(ARGV[3])
      local used = redis.call('HINCRBY', KEYS[1], 'used', actual)
      if actual ~= 0 then
        redis.call('HINCRBY', KEYS[3], ARGV[4], actual)
        redis.call('PEXPIRE', KEYS[3], ARGV[6])
      end
      redis.call('PEXPIRE', KEYS[1], ARGV[6])
      return {1, used, tonumber(redis.call('HGET', KEYS[1], 'reserved') or '0')}
      """);

  static final Script SPEND = new Script("""
      -- KEYS: spend hash, unpriced hash, marker. ARGV: team|tier, nanos, tier, unpriced (0/1), marker ms, keep ms
      if not redis.call('SET', KEYS[3], '1', 'NX', 'PX', ARGV[5]) then
        return {0}
      end
      redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
      redis.call('PEXPIRE', KEYS[1], ARGV[6])
      if ARGV[4] == '1' then
        redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
        redis.call('PEXPIRE', KEYS[2], ARGV[6])
      end
      return {1}
      """);

  record Script(String text, String sha) {
    Script(String text) {
      this(text, sha1(text));
    }
  }

  private record Pending(Hold hold, long actual) {}

  /** A spend amount not yet in Redis; {@code id} makes its write count once however often it is replayed. */
  private record PendingSpend(String id, String month, String team, Tier tier, long nanos, boolean unpriced) {
    MonthSpend asSpend() {
      return new MonthSpend(Map.of(team, Map.of(tier, nanos)), unpriced ? Map.of(tier, 1L) : Map.of());
    }
  }

  private final RedisClient client;
  private final String location;
  private final Clock clock;
  private final Duration holdTimeout;
  private final boolean failClosed;
  private final MemoryUsageStore local = new MemoryUsageStore();
  private final Map<PoolKey, PoolUsage> lastKnown = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Long>> lastKnownTeams = new ConcurrentHashMap<>();
  private final Queue<Pending> pending = new ConcurrentLinkedQueue<>();
  private final Map<String, MonthSpend> lastKnownSpend = new ConcurrentHashMap<>();
  private final Queue<PendingSpend> pendingSpend = new ConcurrentLinkedQueue<>();
  private final ScheduledExecutorService maintenance;
  private volatile StatefulRedisConnection<String, String> connection;
  private volatile boolean up;
  private volatile Instant downSince;
  private volatile boolean closed;

  /**
   * Connects to {@code uri}; when Redis is not reachable yet, starts in the unreachable state and
   * keeps trying every {@code retryEvery}.
   *
   * @param holdTimeout how long a reservation may stay in Redis before it is presumed abandoned
   *     (longer than any request may run)
   */
  public RedisUsageStore(String uri, Duration timeout, Duration retryEvery, Duration holdTimeout,
      boolean failClosed, Clock clock) {
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(timeout);
    this.location = redisUri.getHost() + ":" + redisUri.getPort();
    this.clock = clock;
    this.holdTimeout = holdTimeout;
    this.failClosed = failClosed;
    this.client = RedisClient.create(redisUri);
    client.setOptions(ClientOptions.builder()
        .autoReconnect(false)
        .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
        .timeoutOptions(TimeoutOptions.enabled(timeout))
        .build());
    this.downSince = clock.instant();
    if (!tryConnect()) {
      log.error("Quota store Redis at {} is unreachable at start; {}", location, outageMode());
    }
    this.maintenance = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-redis-quota").daemon(true).factory());
    long every = Math.max(1, retryEvery.toMillis());
    maintenance.scheduleWithFixedDelay(this::maintain, every, every, TimeUnit.MILLISECONDS);
  }

  @Override
  public ReserveOutcome reserve(PoolKey pool, String team, long tokens, long ceiling) {
    if (up) {
      Hold hold = Hold.create(pool, team, tokens);
      // Outage-era usage and holds of this replica that Redis does not know yet count too.
      PoolUsage mine = local.usage(pool);
      long now = clock.millis();
      try {
        List<Long> result = call(redis -> eval(redis, RESERVE, poolKeys(pool),
            Long.toString(tokens), Long.toString(ceiling - mine.committed()), member(hold),
            Long.toString(now + holdTimeout.toMillis()), Long.toString(now), Long.toString(keepMillis(pool))));
        PoolUsage shared = remember(pool, result);
        return new ReserveOutcome(result.get(0) == 1 ? hold : null, shared.plus(mine));
      } catch (RuntimeException e) {
        markDown(e);
        // The script may have run before the connection broke: take the hold back on return.
        pending.add(new Pending(hold, 0));
      }
    }
    if (failClosed) {
      throw new StoreUnavailableException("the shared quota store (Redis at " + location
          + ") is unreachable and quota.failClosed is set");
    }
    PoolUsage baseline = lastKnown.getOrDefault(pool, PoolUsage.ZERO);
    ReserveOutcome outcome = local.reserve(pool, team, tokens, ceiling - baseline.committed());
    return new ReserveOutcome(
        outcome.admitted() ? outcome.hold().asLocal() : null, outcome.usage().plus(baseline));
  }

  @Override
  public PoolUsage settle(Hold hold, long actualTokens) {
    PoolKey pool = hold.pool();
    if (hold.local()) {
      local.settle(hold, 0);
    }
    if (up) {
      try {
        PoolUsage shared = remember(pool, call(redis -> runSettle(redis, hold, actualTokens)));
        return shared.plus(local.usage(pool));
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    pending.add(new Pending(hold, actualTokens));
    if (actualTokens != 0) {
      local.addUsage(pool, hold.team(), actualTokens);
    }
    return lastKnown.getOrDefault(pool, PoolUsage.ZERO).plus(local.usage(pool));
  }

  @Override
  public PoolUsage usage(PoolKey pool) {
    if (up) {
      try {
        List<KeyValue<String, String>> values = call(redis -> redis.hmget(poolKey(pool), "used", "reserved"));
        PoolUsage shared = new PoolUsage(longValue(values.get(0)), longValue(values.get(1)));
        lastKnown.put(pool, shared);
        return shared.plus(local.usage(pool));
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    return lastKnown.getOrDefault(pool, PoolUsage.ZERO).plus(local.usage(pool));
  }

  @Override
  public Map<String, Long> teamUsage(String month) {
    Map<String, Long> result = new TreeMap<>();
    if (up) {
      try {
        Map<String, String> shared = call(redis -> redis.hgetall(tag(month) + ":teams"));
        Map<String, Long> parsed = new TreeMap<>();
        shared.forEach((team, used) -> parsed.put(team, Long.parseLong(used)));
        lastKnownTeams.put(month, parsed);
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    result.putAll(lastKnownTeams.getOrDefault(month, Map.of()));
    local.teamUsage(month).forEach((team, used) -> result.merge(team, used, Long::sum));
    return result;
  }

  @Override
  public boolean claimAlert(PoolKey pool, String band) {
    if (up) {
      try {
        String key = tag(pool.month()) + ":alerts";
        long added = call(redis -> {
          long n = redis.sadd(key, pool.tier().tag() + "|" + band);
          redis.pexpire(key, keepMillis(pool));
          return n;
        });
        return added == 1;
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    return local.claimAlert(pool, band);
  }

  /**
   * Adds the amount with one script (HINCRBY under a once-only marker). While Redis is unreachable
   * the amount counts locally and is queued, like a settlement, and written back when it returns.
   */
  @Override
  public void addSpend(String month, String team, Tier tier, long nanos, boolean unpriced) {
    PendingSpend amount = new PendingSpend(UUID.randomUUID().toString(), month, team, tier, nanos, unpriced);
    if (up) {
      try {
        call(redis -> runSpend(redis, amount));
        // Known to be in Redis now: counts in the figure used while Redis is away, until the next read.
        lastKnownSpend.merge(month, amount.asSpend(), MonthSpend::plus);
        return;
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    pendingSpend.add(amount);
    local.addSpend(month, team, tier, nanos, unpriced);
  }

  @Override
  public MonthSpend spend(String month) {
    if (up) {
      try {
        Map<String, String> amounts = call(redis -> redis.hgetall(tag(month) + ":spend"));
        Map<String, String> unpriced = call(redis -> redis.hgetall(tag(month) + ":spendUnpriced"));
        lastKnownSpend.put(month, parseSpend(amounts, unpriced));
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    return lastKnownSpend.getOrDefault(month, MonthSpend.EMPTY).plus(local.spend(month));
  }

  /** One team's spend: one HMGET of its tiers (checked before every request of a team with a budget). */
  @Override
  public long teamSpend(String month, String team) {
    if (up) {
      try {
        Tier[] tiers = Tier.values();
        String[] fields = new String[tiers.length];
        for (int i = 0; i < tiers.length; i++) {
          fields[i] = team + "|" + tiers[i].tag();
        }
        List<KeyValue<String, String>> values = call(redis -> redis.hmget(tag(month) + ":spend", fields));
        Map<Tier, Long> byTier = new EnumMap<>(Tier.class);
        for (int i = 0; i < tiers.length; i++) {
          byTier.put(tiers[i], longValue(values.get(i)));
        }
        lastKnownSpend.compute(month, (m, known) -> (known == null ? MonthSpend.EMPTY : known).withTeam(team, byTier));
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    return lastKnownSpend.getOrDefault(month, MonthSpend.EMPTY).plus(local.spend(month)).team(team);
  }

  private static MonthSpend parseSpend(Map<String, String> amounts, Map<String, String> unpriced) {
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

  @Override
  public boolean claimSpendAlert(String month, String team, String band) {
    if (up) {
      try {
        String key = tag(month) + ":spendAlerts";
        long keep = keepMillis(month);
        long added = call(redis -> {
          long n = redis.sadd(key, team + "|" + band);
          redis.pexpire(key, keep);
          return n;
        });
        return added == 1;
      } catch (RuntimeException e) {
        markDown(e);
      }
    }
    return local.claimSpendAlert(month, team, band);
  }

  @Override
  public boolean blocking() {
    return true;
  }

  @Override
  public StoreStatus status() {
    return new StoreStatus("redis", location, up, pending.size() + pendingSpend.size());
  }

  /** Whether Redis answered the last call. */
  public boolean reachable() {
    return up;
  }

  @Override
  public void close() {
    closed = true;
    maintenance.shutdown();
    if (!up) {
      tryConnect();
    }
    if (up) {
      drain();
    }
    if (!pendingSpend.isEmpty()) {
      long nanos = pendingSpend.stream().mapToLong(PendingSpend::nanos).sum();
      log.error("Quota store Redis at {} is unreachable at shutdown: {} spend amounts ({} USD) counted by "
          + "this replica while it was away are lost", location, pendingSpend.size(), nanos / 1e9);
    }
    if (!pending.isEmpty()) {
      long tokens = pending.stream().mapToLong(Pending::actual).sum();
      log.error("Quota store Redis at {} is unreachable at shutdown: {} settlements ({} tokens) counted by "
          + "this replica while it was away are lost", location, pending.size(), tokens);
    }
    StatefulRedisConnection<String, String> c = connection;
    if (c != null) {
      c.close();
    }
    client.shutdown();
  }

  private void maintain() {
    if (closed) {
      return;
    }
    try {
      if (!up && tryConnect()) {
        Duration away = Duration.between(downSince, clock.instant());
        log.warn("Quota store Redis at {} is reachable again (away {}); writing back {} settlements "
            + "counted locally meanwhile", location, Durations.format(away.truncatedTo(ChronoUnit.SECONDS)),
            pending.size() + pendingSpend.size());
      }
      if (up && (!pending.isEmpty() || !pendingSpend.isEmpty())) {
        drain();
      }
    } catch (RuntimeException e) {
      log.error("Quota store maintenance failed", e);
    }
  }

  /** Writes the queued settlements to Redis, oldest first; stops at the first failure. */
  private void drain() {
    Pending next;
    while (up && (next = pending.peek()) != null) {
      Pending p = next;
      try {
        call(redis -> runSettle(redis, p.hold(), p.actual()));
      } catch (RuntimeException e) {
        markDown(e);
        return;
      }
      pending.poll();
      if (p.actual() != 0) {
        local.addUsage(p.hold().pool(), p.hold().team(), -p.actual());
      }
    }
    PendingSpend amount;
    while (up && (amount = pendingSpend.peek()) != null) {
      PendingSpend a = amount;
      try {
        call(redis -> runSpend(redis, a));
      } catch (RuntimeException e) {
        markDown(e);
        return;
      }
      pendingSpend.poll();
      local.addSpendOnly(a.month(), a.team(), a.tier(), -a.nanos());
      if (a.unpriced()) {
        local.addUnpriced(a.month(), a.tier(), -1);
      }
    }
  }

  private List<Long> runSpend(RedisCommands<String, String> redis, PendingSpend a) {
    String[] keys = {tag(a.month()) + ":spend", tag(a.month()) + ":spendUnpriced",
        tag(a.month()) + ":settled:spend:" + a.id()};
    return eval(redis, SPEND, keys, a.team() + "|" + a.tier().tag(), Long.toString(a.nanos()), a.tier().tag(),
        a.unpriced() ? "1" : "0", Long.toString(holdTimeout.toMillis()), Long.toString(keepMillis(a.month())));
  }

  private synchronized boolean tryConnect() {
    try {
      StatefulRedisConnection<String, String> c = connection;
      if (c == null || !c.isOpen()) {
        // A connection that is no longer open has released its channel; start a new one.
        c = client.connect();
        connection = c;
      }
      c.sync().ping();
      up = true;
      return true;
    } catch (RuntimeException e) {
      log.debug("Quota store Redis at {} still unreachable: {}", location, e.toString());
      return false;
    }
  }

  private synchronized void markDown(RuntimeException cause) {
    if (!up) {
      return;
    }
    up = false;
    downSince = clock.instant();
    log.error("Quota store Redis at {} is unreachable ({}); {}. Retrying in the background.",
        location, cause.toString(), outageMode());
  }

  private String outageMode() {
    return failClosed
        ? "refusing requests until it returns (quota.failClosed)"
        : "this replica counts usage locally and writes it back when Redis returns";
  }

  private <T> T call(Function<RedisCommands<String, String>, T> operation) {
    StatefulRedisConnection<String, String> c = connection;
    if (c == null || !c.isOpen()) {
      throw new IllegalStateException("connection lost");
    }
    return operation.apply(c.sync());
  }

  private List<Long> runSettle(RedisCommands<String, String> redis, Hold hold, long actual) {
    PoolKey pool = hold.pool();
    String[] keys = {poolKey(pool), holdsKey(pool), tag(pool.month()) + ":teams",
        tag(pool.month()) + ":settled:" + hold.id()};
    return eval(redis, SETTLE, keys, member(hold), Long.toString(hold.tokens()), Long.toString(actual),
        hold.team(), Long.toString(holdTimeout.toMillis()), Long.toString(keepMillis(pool)));
  }

  private static List<Long> eval(RedisCommands<String, String> redis, Script script, String[] keys, String... args) {
    try {
      return redis.evalsha(script.sha(), ScriptOutputType.MULTI, keys, args);
    } catch (RedisNoScriptException e) {
      // A restarted Redis has an empty script cache: EVAL sends the text and caches it again.
      return redis.eval(script.text(), ScriptOutputType.MULTI, keys, args);
    }
  }

  private PoolUsage remember(PoolKey pool, List<Long> result) {
    PoolUsage shared = new PoolUsage(result.get(1), result.get(2));
    lastKnown.put(pool, shared);
    return shared;
  }

  private static long longValue(KeyValue<String, String> value) {
    return value.hasValue() ? Long.parseLong(value.getValue()) : 0;
  }

  static String tag(String month) {
    return "{spillway:quota:" + month + "}";
  }

  private static String poolKey(PoolKey pool) {
    return tag(pool.month()) + ":pool:" + pool.tier().tag();
  }

  private static String holdsKey(PoolKey pool) {
    return tag(pool.month()) + ":holds:" + pool.tier().tag();
  }

  private static String[] poolKeys(PoolKey pool) {
    return new String[] {poolKey(pool), holdsKey(pool)};
  }

  private static String member(Hold hold) {
    return hold.id() + "|" + hold.tokens();
  }

  /** Milliseconds until a month's keys may go: {@value #MONTHS_KEPT} months after the month ends. */
  private long keepMillis(PoolKey pool) {
    return keepMillis(pool.month());
  }

  private long keepMillis(String month) {
    Instant until = YearMonth.parse(month).plusMonths(1 + MONTHS_KEPT).atDay(1)
        .atStartOfDay(ZoneOffset.UTC).toInstant();
    return Math.max(holdTimeout.toMillis(), until.toEpochMilli() - clock.millis());
  }

  private static String sha1(String text) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("SHA-1 is always available", e);
    }
  }
}
