package io.spillway.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Ticker;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.config.CacheConfig;
import io.spillway.core.pipeline.Interceptor;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The exact response cache and the table of identical calls in flight, for one gateway process.
 *
 * <p>Answers are kept in a Caffeine cache bounded by their total size in bytes
 * ({@code cache.maxSize}, counted by a weigher) and expired {@code cache.ttl} after they were
 * stored, on a ticker driven by the injected {@link Clock}. The pipeline stage that reads and fills
 * it comes from {@link #interceptor()}; it belongs right after authentication.
 *
 * <p>The cache is local to this process: replicas do not share it, and nothing depends on it for
 * correctness. Thread-safe; build one per gateway and share it.
 */
public final class ResponseCache {
  /** The response header that says how the cache served a request: hit, miss or bypass. */
  public static final String HEADER = OutcomeHeadersInterceptor.CACHE;

  final CacheConfig config;
  final Clock clock;
  final Duration streamTimeLimit;
  final CachePolicy policy;
  final CacheMetrics metrics;
  final ConcurrentMap<CacheKey, InFlightCall> inFlight = new ConcurrentHashMap<>();
  private final Cache<CacheKey, CachedAnswer> store;
  private final AtomicLong generation = new AtomicLong();
  private final ConcurrentMap<String, AtomicLong> teamGenerations = new ConcurrentHashMap<>();

  private ResponseCache(Builder builder) {
    this.config = builder.config;
    this.clock = builder.clock;
    this.streamTimeLimit = builder.streamTimeLimit;
    this.policy = new CachePolicy(config);
    this.metrics = new CacheMetrics(builder.meters);
    Clock ticking = builder.clock;
    Ticker ticker = () -> {
      Instant now = ticking.instant();
      return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    };
    this.store = Caffeine.newBuilder()
        .maximumWeight(config.maxSize().bytes())
        .weigher((CacheKey key, CachedAnswer answer) ->
            (int) Math.min(Integer.MAX_VALUE, (long) key.weight() + answer.weight()))
        .expireAfterWrite(config.ttl())
        .ticker(ticker)
        .executor(Runnable::run)
        .evictionListener((CacheKey key, CachedAnswer answer, com.github.benmanes.caffeine.cache.RemovalCause cause) ->
            metrics.evicted(cause))
        .build();
    MeterRegistry meters = builder.meters;
    Gauge.builder("spillway.cache.entries", store, Cache::estimatedSize)
        .description("Answers in the response cache").register(meters);
    Gauge.builder("spillway.cache.size", this, ResponseCache::weightedSize)
        .description("Bytes of answers in the response cache").baseUnit("bytes").register(meters);
    Gauge.builder("spillway.cache.inflight", inFlight, Map::size)
        .description("Distinct cacheable calls in flight that identical requests may join").register(meters);
  }

  public static Builder builder(CacheConfig config) {
    return new Builder(config);
  }

  /** The pipeline stage: put it right after authentication. */
  public Interceptor interceptor() {
    return new CacheInterceptor(this);
  }

  /**
   * Drops every answer that {@code team}'s requests produced, and keeps answers still in flight for
   * that team from being stored. Call it when a team's key is revoked.
   */
  public void invalidateTeam(String team) {
    teamGenerations.computeIfAbsent(team, t -> new AtomicLong()).incrementAndGet();
    store.asMap().values().removeIf(answer -> answer.team().equals(team));
  }

  /** Drops every answer, and keeps answers still in flight from being stored. */
  public void invalidateAll() {
    generation.incrementAndGet();
    store.invalidateAll();
  }

  /** A point-in-time view for the admin API and tests. */
  public Stats stats() {
    store.cleanUp();
    return new Stats(store.estimatedSize(), weightedSize(), inFlight.size(), metrics.totals(),
        metrics.tokensSavedByTeam());
  }

  /**
   * @param counts totals by outcome since start: hit, coalesced, miss, refresh, bypass, evicted,
   *     tokensSaved
   * @param tokensSavedByTeam tokens each team's hits and shared calls did not spend upstream
   */
  public record Stats(
      long entries, long bytes, int inFlight, Map<String, Long> counts, Map<String, Long> tokensSavedByTeam) {}

  long weightedSize() {
    return store.policy().eviction().map(e -> e.weightedSize().orElse(0)).orElse(0L);
  }

  CachedAnswer get(CacheKey key) {
    return store.getIfPresent(key);
  }

  /** A token that changes when answers of {@code team} (or all answers) must no longer be stored. */
  long generation(String team) {
    AtomicLong teamGeneration = teamGenerations.get(team);
    return generation.get() * 31 + (teamGeneration == null ? 0 : teamGeneration.get());
  }

  /** Stores {@code answer} unless it is too large or an invalidation happened since {@code since}. */
  boolean put(CacheKey key, CachedAnswer answer, long since) {
    if ((long) key.weight() + answer.weight() > config.maxEntrySize().bytes()) {
      return false;
    }
    if (generation(answer.team()) != since) {
      return false;
    }
    store.put(key, answer);
    if (generation(answer.team()) != since) {
      store.asMap().remove(key, answer);
      return false;
    }
    return true;
  }

  /** Builds a {@link ResponseCache}; the config is required, the rest have defaults for tests. */
  public static final class Builder {
    private final CacheConfig config;
    private Clock clock = Clock.systemUTC();
    private Duration streamTimeLimit = Duration.ofMinutes(30);
    private MeterRegistry meters = new io.micrometer.core.instrument.simple.SimpleMeterRegistry();

    private Builder(CacheConfig config) {
      this.config = Objects.requireNonNull(config, "config");
    }

    /** Time for TTLs and {@code Age}; Caffeine's ticker reads it. */
    public Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The longest one shared stream may run ({@code server.streamTimeLimit}). */
    public Builder streamTimeLimit(Duration limit) {
      this.streamTimeLimit = Objects.requireNonNull(limit, "limit");
      return this;
    }

    public Builder meters(MeterRegistry meters) {
      this.meters = Objects.requireNonNull(meters, "meters");
      return this;
    }

    public ResponseCache build() {
      return new ResponseCache(this);
    }
  }
}
