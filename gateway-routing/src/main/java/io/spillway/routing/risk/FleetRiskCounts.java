package io.spillway.routing.risk;

import io.spillway.core.fleet.FleetMode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.lettuce.core.ScriptOutputType;
import io.spillway.config.Durations;
import io.spillway.config.ShapingConfig;
import io.spillway.core.risk.ReplicaRiskCounts;
import io.spillway.core.risk.RiskCounts;
import io.spillway.core.risk.RiskWindow;
import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisScript;
import io.spillway.redis.RedisSession;
import io.spillway.routing.breaker.BreakerSettings;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The risk index's counts for a fleet that shares a Redis ({@code store: redis://...}): every
 * replica's requests, errors and latencies, summed in time buckets in Redis, so each replica
 * computes the index from the whole fleet's traffic.
 *
 * <p>No request touches Redis. A request is counted in memory (in this replica's own counts, and as
 * a pending delta); every {@code failover.fleetRefresh} this source's own thread writes the pending
 * deltas and reads the fleet's buckets back in one Lua script, and the index computes from that
 * reading plus what was counted since. The buckets are numbered by time ({@code epochMillis /
 * bucket length}), so replicas with the same {@code shaping.risk} settings and synchronised clocks
 * add into the same ones; buckets older than the windows are deleted by the script, and the two
 * hashes expire when no replica writes for twice the {@code growthWindow}.
 *
 * <p>When the script does not answer within {@code failover.fleetTimeout} (the same rule as the
 * fleet breaker's), the index computes from this replica's own counts ({@link FleetMode#REPLICA_FALLBACK})
 * and one WARN line says so; the deltas counted meanwhile are kept and written once Redis answers
 * again, when the index is back on the fleet's counts and another WARN line says so. A write whose
 * answer was lost (Redis took it but the reply timed out) is written again: the fleet's counts may
 * then hold those requests twice, for as long as their buckets last.
 *
 * <p>Thread-safe.
 */
public final class FleetRiskCounts implements RiskCounts {
  private static final Logger log = LoggerFactory.getLogger(FleetRiskCounts.class);
  static final String GROWTH_KEY = "{spillway:risk}:growth";
  static final String RECENT_KEY = "{spillway:risk}:recent";

  /**
   * The script ({@code fleet-risk.lua} beside this class). KEYS: the growth hash (field: slice, value: requests) and the recent hash (fields
   * {@code slice:n}, {@code slice:e}, {@code slice:l}: requests, errors, latency sum). ARGV: the oldest
   * growth slice kept, the oldest recent slice kept, the keys' time to live (ms), the number of
   * growth deltas, then the growth deltas as (slice, requests) and the recent ones as (slice,
   * requests, errors, latency). Adds the deltas, deletes buckets older than the windows, and answers
   * both hashes.
   */
  static final RedisScript SCRIPT = RedisScript.load(FleetRiskCounts.class, "fleet-risk.lua");

  private final ShapingConfig.RiskConfig config;
  private final BreakerSettings failover;
  private final Clock clock;
  private final String location;
  private final RedisSession redis;
  private final ReplicaRiskCounts own;
  private final ScheduledExecutorService worker;
  private final Object lock = new Object();
  /** Counted here and not yet in Redis; guarded by {@link #lock}. */
  private ReplicaRiskCounts pending;
  /** The fleet's counts as last read, plus what was counted here since; guarded by {@link #lock}. */
  private ReplicaRiskCounts fleet;
  private volatile boolean away = true;
  private volatile Instant awaySince;
  /** Whether a line said this replica is on its own counts (an outage, or Redis unreachable at start). */
  private volatile boolean outage;
  private volatile boolean closed;
  private final AtomicBoolean closing = new AtomicBoolean();

  private FleetRiskCounts(RedisLink link, ShapingConfig.RiskConfig config, BreakerSettings failover, Clock clock) {
    this.config = config;
    this.failover = failover;
    this.clock = clock;
    this.location = link.location();
    this.redis = link.session("risk counts", failover.fleetTimeout());
    this.own = new ReplicaRiskCounts(config.growthWindow(), config.window());
    this.pending = new ReplicaRiskCounts(config.growthWindow(), config.window());
    this.fleet = new ReplicaRiskCounts(config.growthWindow(), config.window());
    this.worker = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-fleet-risk").daemon(true).factory());
  }

  /**
   * Reads the fleet's counts once in the Redis of {@code link}; when Redis does not answer, starts in
   * {@link FleetMode#REPLICA_FALLBACK}. Then syncs every {@code failover.fleetRefresh}.
   */
  public static FleetRiskCounts connect(RedisLink link, ShapingConfig.RiskConfig config, BreakerSettings failover,
      Clock clock) {
    FleetRiskCounts counts = new FleetRiskCounts(link, config, failover, clock);
    counts.awaySince = clock.instant();
    if (!counts.sync()) {
      counts.outage = true;
      log.warn("risk index: the fleet's counts in Redis at {} are unreachable at start; this replica computes "
          + "the risk index from its own requests (local-fallback) until Redis answers", counts.location);
    }
    long every = Math.max(1, failover.fleetRefresh().toMillis());
    counts.worker.scheduleWithFixedDelay(counts::maintain, every, every, TimeUnit.MILLISECONDS);
    return counts;
  }

  @Override
  public void answered(long nowMillis, long latencyMillis, boolean error) {
    own.answered(nowMillis, latencyMillis, error);
    synchronized (lock) {
      pending.answered(nowMillis, latencyMillis, error);
      fleet.answered(nowMillis, latencyMillis, error);
    }
  }

  @Override
  public void refused(long nowMillis) {
    own.refused(nowMillis);
    synchronized (lock) {
      pending.refused(nowMillis);
      fleet.refused(nowMillis);
    }
  }

  @Override
  public Totals totals(long nowMillis) {
    if (away) {
      return own.totals(nowMillis);
    }
    synchronized (lock) {
      return fleet.totals(nowMillis);
    }
  }

  @Override
  public FleetMode mode() {
    return away ? FleetMode.REPLICA_FALLBACK : FleetMode.FLEET;
  }

  @Override
  public void describe(ObjectNode into) {
    into.put("mode", mode().tag());
    ObjectNode fleetJson = into.putObject("fleet");
    fleetJson.put("store", "redis");
    fleetJson.put("location", location);
    fleetJson.put("reachable", !away);
    fleetJson.put("awaySince", away ? awaySince.toString() : null);
    fleetJson.put("timeout", Durations.format(failover.fleetTimeout()));
    fleetJson.put("refresh", Durations.format(failover.fleetRefresh()));
  }

  @Override
  public void close() {
    if (closing.getAndSet(true)) {
      return;
    }
    closed = true;
    worker.shutdownNow();
    try {
      worker.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    redis.close();
  }

  private void maintain() {
    if (closed) {
      return;
    }
    try {
      sync();
    } catch (RuntimeException e) {
      log.error("risk index: syncing the fleet's counts failed", e);
    }
  }

  /**
   * Writes the pending deltas and reads the fleet's counts; answers whether Redis answered. Runs on
   * this source's own thread only (and once from {@link #connect} before that starts).
   */
  private boolean sync() {
    ReplicaRiskCounts sending;
    synchronized (lock) {
      sending = pending;
      pending = new ReplicaRiskCounts(config.growthWindow(), config.window());
    }
    long now = clock.millis();
    List<List<String>> hashes;
    try {
      hashes = eval(sending, now);
    } catch (RuntimeException e) {
      synchronized (lock) {
        // Kept for when Redis answers again: what this replica counted is not lost.
        sending.addAll(pending);
        pending = sending;
      }
      leave(e);
      return false;
    }
    ReplicaRiskCounts view = new ReplicaRiskCounts(config.growthWindow(), config.window());
    view.add(growthBuckets(hashes.get(0)), recentBuckets(hashes.get(1)));
    boolean rejoined;
    synchronized (lock) {
      view.addAll(pending);
      fleet = view;
      rejoined = away;
      away = false;
    }
    if (rejoined && outage && !closed) {
      outage = false;
      Duration gone = Duration.between(awaySince, clock.instant()).truncatedTo(ChronoUnit.SECONDS);
      log.warn("risk index: Redis at {} answers (away {}); the risk index counts the fleet's requests again",
          location, Durations.format(gone));
    }
    return true;
  }

  private void leave(RuntimeException cause) {
    if (away || closed) {
      return;
    }
    awaySince = clock.instant();
    away = true;
    outage = true;
    log.warn("risk index: Redis at {} did not answer (timeout {}; {}); this replica computes the risk index "
        + "from its own requests (local-fallback) until Redis answers again",
        location, Durations.format(failover.fleetTimeout()), cause.toString());
  }

  private List<List<String>> eval(ReplicaRiskCounts deltas, long now) {
    if (!redis.connected()) {
      redis.connect();
    }
    long growthSlice = Math.floorDiv(now, deltas.growthBucketMillis());
    long recentSlice = Math.floorDiv(now, deltas.recentBucketMillis());
    List<RiskWindow.Bucket> growth = deltas.growthBuckets();
    List<RiskWindow.Bucket> recent = deltas.recentBuckets();
    List<String> argv = new ArrayList<>(4 + 2 * growth.size() + 4 * recent.size());
    argv.add(Long.toString(growthSlice - 2L * BUCKETS));
    argv.add(Long.toString(recentSlice - BUCKETS));
    argv.add(Long.toString(2 * config.growthWindow().toMillis() + deltas.growthBucketMillis()));
    argv.add(Integer.toString(growth.size()));
    for (RiskWindow.Bucket b : growth) {
      argv.add(Long.toString(b.slice()));
      argv.add(Long.toString(b.count()));
    }
    for (RiskWindow.Bucket b : recent) {
      argv.add(Long.toString(b.slice()));
      argv.add(Long.toString(b.count()));
      argv.add(Long.toString(b.errors()));
      argv.add(Long.toString(b.latencyMillis()));
    }
    String[] keys = {GROWTH_KEY, RECENT_KEY};
    String[] args = argv.toArray(String[]::new);
    List<Object> result = redis.eval(SCRIPT, ScriptOutputType.MULTI, keys, args);
    List<List<String>> hashes = new ArrayList<>(2);
    for (Object hash : result) {
      List<String> flat = new ArrayList<>();
      ((List<?>) hash).forEach(value -> flat.add(String.valueOf(value)));
      hashes.add(flat);
    }
    return hashes;
  }

  private static List<RiskWindow.Bucket> growthBuckets(List<String> flat) {
    List<RiskWindow.Bucket> buckets = new ArrayList<>();
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      buckets.add(new RiskWindow.Bucket(Long.parseLong(flat.get(i)), Long.parseLong(flat.get(i + 1)), 0, 0));
    }
    return buckets;
  }

  private static List<RiskWindow.Bucket> recentBuckets(List<String> flat) {
    Map<Long, long[]> bySlice = new TreeMap<>();
    for (int i = 0; i + 1 < flat.size(); i += 2) {
      String field = flat.get(i);
      int colon = field.lastIndexOf(':');
      long[] values = bySlice.computeIfAbsent(Long.parseLong(field.substring(0, colon)), s -> new long[3]);
      long value = Long.parseLong(flat.get(i + 1));
      switch (field.substring(colon + 1)) {
        case "n" -> values[0] = value;
        case "e" -> values[1] = value;
        case "l" -> values[2] = value;
        default -> { }
      }
    }
    List<RiskWindow.Bucket> buckets = new ArrayList<>();
    bySlice.forEach((slice, v) -> buckets.add(new RiskWindow.Bucket(slice, v[0], v[1], v[2])));
    return buckets;
  }
}
