package io.spillway.cache;

import com.github.benmanes.caffeine.cache.RemovalCause;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Route;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The cache's counters, in Micrometer and as plain totals for the admin snapshot. Tags are bounded:
 * result, route, tier, bypass reason, eviction cause. Teams appear only in the admin snapshot.
 *
 * <ul>
 *   <li>{@code spillway_cache_requests_total{result=hit|coalesced|miss|refresh|bypass, route}}
 *   <li>{@code spillway_cache_bypass_total{reason}}
 *   <li>{@code spillway_cache_evictions_total{cause=size|expired|collected}}
 *   <li>{@code spillway_cache_tokens_saved_total{tier}}: tokens hits and joiners did not spend
 * </ul>
 */
final class CacheMetrics {
  private final MeterRegistry registry;
  private final Map<String, LongAdder> totals = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> tokensSavedByTeam = new ConcurrentHashMap<>();

  CacheMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  void request(String result, Route route) {
    Counter.builder("spillway.cache.requests")
        .description("Requests seen by the response cache, by outcome")
        .tag("result", result)
        .tag("route", route.tag())
        .register(registry)
        .increment();
    total(result).increment();
  }

  void bypass(String reason, Route route) {
    request("bypass", route);
    Counter.builder("spillway.cache.bypass")
        .description("Requests the cache did not consider, by reason")
        .tag("reason", reason)
        .register(registry)
        .increment();
  }

  void evicted(RemovalCause cause) {
    Counter.builder("spillway.cache.evictions")
        .description("Answers the cache dropped to stay within its size or TTL")
        .tag("cause", cause.name().toLowerCase(Locale.ROOT))
        .register(registry)
        .increment();
    total("evicted").increment();
  }

  void tokensSaved(Caller caller, long tokens) {
    if (tokens <= 0) {
      return;
    }
    Counter.builder("spillway.cache.tokens.saved")
        .description("Tokens answered from the cache or a shared call instead of spent upstream")
        .tag("tier", caller.tier().tag())
        .register(registry)
        .increment(tokens);
    tokensSavedByTeam.computeIfAbsent(caller.team(), t -> new LongAdder()).add(tokens);
    total("tokensSaved").add(tokens);
  }

  Map<String, Long> totals() {
    Map<String, Long> out = new TreeMap<>();
    totals.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  Map<String, Long> tokensSavedByTeam() {
    Map<String, Long> out = new TreeMap<>();
    tokensSavedByTeam.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  private LongAdder total(String name) {
    return totals.computeIfAbsent(name, n -> new LongAdder());
  }
}
