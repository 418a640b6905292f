package io.spillway.quota.store;

import io.spillway.config.Durations;
import io.spillway.core.pipeline.Tier;
import io.spillway.redis.RedisCommandException;
import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisOutage;
import io.spillway.redis.RedisSession;
import io.spillway.redis.RedisUnavailableException;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Usage shared by every replica through one Redis: the ledger ({@link RedisLedger}: reservations and
 * settlements as atomic scripts, so N replicas together never admit more than a pool's ceiling) and
 * spend ({@link RedisSpend}), with their keys in {@link RedisQuotaKeys}. This class is the outage
 * rule around them.
 *
 * <p>When Redis does not answer within {@code quota.storeTimeout} (down, or up and hung), the store
 * logs one error for the outage and, unless {@code quota.failClosed}, keeps serving: it reserves
 * against the last counters it saw plus its own local ones, answers reads from the last figures it
 * saw, and queues every settlement and spend amount ({@link OutageReplay}). Every
 * {@code quota.flushInterval} it tries to reconnect; once Redis answers, the queue is written back
 * (each entry exactly once) and the replica is back on shared counters. While Redis is away,
 * replicas cannot see each other's new usage; that is the price of staying up. An error Redis
 * answers with (not a connection problem) is no outage: it is logged, and the call is served as
 * during an outage without marking Redis away.
 */
public final class RedisUsageStore implements UsageStore {
  private static final Logger log = LoggerFactory.getLogger(RedisUsageStore.class);

  private final RedisSession redis;
  private final RedisLedger ledger;
  private final RedisSpend spendStore;
  private final String location;
  private final Clock clock;
  private final boolean failClosed;
  private final MemoryUsageStore local = new MemoryUsageStore();
  private final OutageReplay replay = new OutageReplay(local);
  private final Map<PoolKey, PoolUsage> lastKnown = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Long>> lastKnownTeams = new ConcurrentHashMap<>();
  private final Map<String, MonthSpend> lastKnownSpend = new ConcurrentHashMap<>();
  private final RedisOutage outage;
  private final ScheduledExecutorService maintenance;
  private volatile boolean up;
  private volatile boolean closed;

  /**
   * Uses {@code link}; when Redis is not reachable yet, starts in the unreachable state and keeps
   * trying every {@code retryEvery}.
   *
   * @param timeout the longest any one Redis call may take ({@code quota.storeTimeout})
   * @param holdTimeout how long a reservation may stay in Redis before it is presumed abandoned
   *     (longer than any request may run)
   */
  public RedisUsageStore(RedisLink link, Duration timeout, Duration retryEvery, Duration holdTimeout,
      boolean failClosed, Clock clock) {
    this.redis = link.session("quota store", timeout);
    RedisQuotaKeys keys = new RedisQuotaKeys(clock, holdTimeout);
    this.ledger = new RedisLedger(redis, keys);
    this.spendStore = new RedisSpend(redis, keys);
    this.location = link.location();
    this.clock = clock;
    this.failClosed = failClosed;
    this.outage = new RedisOutage(false, clock.instant());
    if (!tryConnect()) {
      outage.begin(clock.instant(), null);
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
      try {
        RedisLedger.Reply reply = ledger.reserve(hold, ceiling - mine.committed());
        lastKnown.put(pool, reply.usage());
        return new ReserveOutcome(reply.applied() ? hold : null, reply.usage().plus(mine));
      } catch (RedisUnavailableException e) {
        markDown(e);
        // The script may have run before the connection broke: take the hold back on return.
        replay.settlement(hold, 0);
      } catch (RedisCommandException e) {
        refused("a reservation", e);
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
        PoolUsage shared = ledger.settle(hold, actualTokens).usage();
        lastKnown.put(pool, shared);
        return shared.plus(local.usage(pool));
      } catch (RedisUnavailableException e) {
        markDown(e);
      } catch (RedisCommandException e) {
        // Sending it again would be refused again: it counts on this replica only.
        refused("a settlement of " + actualTokens + " tokens", e);
        local.addUsage(pool, hold.team(), actualTokens);
        return lastKnown.getOrDefault(pool, PoolUsage.ZERO).plus(local.usage(pool));
      }
    }
    replay.settlement(hold, actualTokens);
    return lastKnown.getOrDefault(pool, PoolUsage.ZERO).plus(local.usage(pool));
  }

  @Override
  public PoolUsage usage(PoolKey pool) {
    PoolUsage shared = read("pool usage", () -> ledger.usage(pool));
    if (shared != null) {
      lastKnown.put(pool, shared);
    }
    return lastKnown.getOrDefault(pool, PoolUsage.ZERO).plus(local.usage(pool));
  }

  @Override
  public Map<String, Long> teamUsage(String month) {
    Map<String, Long> shared = read("team usage", () -> ledger.teamUsage(month));
    if (shared != null) {
      lastKnownTeams.put(month, shared);
    }
    Map<String, Long> result = new TreeMap<>(lastKnownTeams.getOrDefault(month, Map.of()));
    local.teamUsage(month).forEach((team, used) -> result.merge(team, used, Saturating::add));
    return result;
  }

  @Override
  public boolean claimAlert(PoolKey pool, String band) {
    Boolean claimed = read("an alert claim", () -> ledger.claimAlert(pool, band));
    return claimed != null ? claimed : local.claimAlert(pool, band);
  }

  /**
   * Adds the amount with one script (HINCRBY under a once-only marker). While Redis is unreachable
   * the amount counts locally and is queued, like a settlement, and written back when it returns.
   */
  @Override
  public void addSpend(String month, String team, Tier tier, long nanos, boolean unpriced) {
    RedisSpend.Amount amount = new RedisSpend.Amount(UUID.randomUUID().toString(), month, team, tier, nanos, unpriced);
    if (up) {
      try {
        spendStore.add(amount);
        // Known to be in Redis now: counts in the figure used while Redis is away, until the next read.
        lastKnownSpend.merge(month, amount.asSpend(), MonthSpend::plus);
        return;
      } catch (RedisUnavailableException e) {
        markDown(e);
      } catch (RedisCommandException e) {
        refused("a spend amount", e);
        local.addSpend(month, team, tier, nanos, unpriced);
        return;
      }
    }
    replay.spend(amount);
  }

  @Override
  public MonthSpend spend(String month) {
    MonthSpend shared = read("spend", () -> spendStore.month(month));
    if (shared != null) {
      lastKnownSpend.put(month, shared);
    }
    return lastKnownSpend.getOrDefault(month, MonthSpend.EMPTY).plus(local.spend(month));
  }

  /** One team's spend: one HMGET of its tiers (checked before every request of a team with a budget). */
  @Override
  public long teamSpend(String month, String team) {
    Map<Tier, Long> byTier = read("a team's spend", () -> spendStore.team(month, team));
    if (byTier != null) {
      lastKnownSpend.compute(month, (m, known) -> (known == null ? MonthSpend.EMPTY : known).withTeam(team, byTier));
    }
    return lastKnownSpend.getOrDefault(month, MonthSpend.EMPTY).plus(local.spend(month)).team(team);
  }

  @Override
  public boolean claimSpendAlert(String month, String team, String band) {
    Boolean claimed = read("a spend alert claim", () -> spendStore.claimAlert(month, team, band));
    return claimed != null ? claimed : local.claimSpendAlert(month, team, band);
  }

  @Override
  public boolean blocking() {
    return true;
  }

  @Override
  public StoreStatus status() {
    return new StoreStatus("redis", location, up, replay.size());
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
    if (replay.queuedSpends() > 0) {
      log.error("Quota store Redis at {} is unreachable at shutdown: {} spend amounts ({} USD) counted by "
          + "this replica while it was away are lost", location, replay.queuedSpends(), replay.queuedNanos() / 1e9);
    }
    if (replay.queuedSettlements() > 0) {
      log.error("Quota store Redis at {} is unreachable at shutdown: {} settlements ({} tokens) counted by "
          + "this replica while it was away are lost", location, replay.queuedSettlements(), replay.queuedTokens());
    }
    redis.close();
  }

  /** A read from Redis, or null when Redis is away (or refused it): the caller answers from what it saw last. */
  private <T> T read(String what, Supplier<T> call) {
    if (!up) {
      return null;
    }
    try {
      return call.get();
    } catch (RedisUnavailableException e) {
      markDown(e);
    } catch (RedisCommandException e) {
      refused(what, e);
    }
    return null;
  }

  private void refused(String what, RedisCommandException e) {
    log.error("Quota store Redis at {} refused {} (it answers; this is not an outage): {}", location, what,
        e.getMessage());
  }

  private void maintain() {
    if (closed) {
      return;
    }
    try {
      if (!up && tryConnect()) {
        Duration away = outage.end(clock.instant());
        log.warn("Quota store Redis at {} is reachable again (away {}); writing back {} settlements "
            + "counted locally meanwhile", location,
            Durations.format((away == null ? Duration.ZERO : away).truncatedTo(ChronoUnit.SECONDS)), replay.size());
      }
      if (up && !replay.isEmpty()) {
        drain();
      }
    } catch (RuntimeException e) {
      log.error("Quota store maintenance failed", e);
    }
  }

  /** Writes the queued settlements and spend amounts to Redis; stops at the first it does not take. */
  private void drain() {
    try {
      replay.drain(ledger, spendStore);
    } catch (RedisUnavailableException e) {
      markDown(e);
    }
  }

  private synchronized boolean tryConnect() {
    try {
      redis.connect();
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
    outage.begin(clock.instant(), cause);
    log.error("Quota store Redis at {} is unreachable ({}); {}. Retrying in the background.",
        location, cause.getMessage(), outageMode());
  }

  private String outageMode() {
    return failClosed
        ? "refusing requests until it returns (quota.failClosed)"
        : "this replica counts usage locally and writes it back when Redis returns";
  }
}
