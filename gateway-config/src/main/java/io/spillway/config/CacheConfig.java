package io.spillway.config;

import io.spillway.core.pipeline.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The exact response cache for deterministic requests, and the coalescing of identical requests in
 * flight (see {@code docs/cache.md}).
 *
 * @param maxSize total bytes of cached answers (the weigher counts each answer's bytes)
 * @param ttl how long a stored answer is reused, counted from when it was stored
 * @param maxEntrySize answers larger than this are never stored; it also bounds the replay buffer of
 *     one shared in-flight stream
 * @param scope who may share an answer: {@code team} (default), {@code tier} or {@code global}
 * @param tiers per-tier opt-in/out; every tier is in by default
 * @param uncacheableTools tool types or function names whose presence in {@code tools} makes a
 *     request uncacheable (tools that reach the outside world or have side effects)
 */
public record CacheConfig(
    Boolean enabled,
    DataSize maxSize,
    Duration ttl,
    DataSize maxEntrySize,
    Scope scope,
    Map<Tier, Boolean> tiers,
    List<String> uncacheableTools) {

  /** Built-in tools the upstream runs itself against changing or side-effecting state. */
  public static final List<String> DEFAULT_UNCACHEABLE_TOOLS =
      List.of("web_search", "web_search_preview", "file_search", "mcp", "code_interpreter",
          "computer_use_preview", "local_shell", "shell");

  /** {@code cache.tiers.<tier>: true|false}; a tier left out is cached. */
  private static final Map<Tier, Boolean> EVERY_TIER = Map.of(Tier.GOLD, true, Tier.SILVER, true, Tier.BRONZE, true);

  /** Declared after the list and map it uses: static fields initialise in order. */
  public static final CacheConfig DEFAULTS = new CacheConfig(null, null, null, null, null, null, null);

  public CacheConfig {
    enabled = enabled != null ? enabled : true;
    maxSize = maxSize != null ? maxSize : DataSize.ofMebibytes(256);
    ttl = ttl != null ? ttl : Duration.ofMinutes(10);
    maxEntrySize = maxEntrySize != null ? maxEntrySize : DataSize.ofMebibytes(4);
    scope = scope != null ? scope : Scope.TEAM;
    tiers = TierMaps.withDefaults(tiers, EVERY_TIER, (given, byDefault) -> given);
    uncacheableTools =
        uncacheableTools != null
            ? Collections.unmodifiableList(new ArrayList<>(uncacheableTools))
            : DEFAULT_UNCACHEABLE_TOOLS;
    ConfigProblems.Reporter at = ConfigProblems.at("cache");
    at.positive("ttl", ttl, "must be longer than 0s");
    if (maxEntrySize.bytes() < 1 || maxEntrySize.bytes() > Integer.MAX_VALUE) {
      at.problem("maxEntrySize", "must be between 1 byte and 2GiB");
    } else if (maxEntrySize.bytes() > maxSize.bytes()) {
      at.problem("maxEntrySize", maxEntrySize + " is larger than " + at.path("maxSize") + " " + maxSize);
    }
    for (int i = 0; i < uncacheableTools.size(); i++) {
      String tool = uncacheableTools.get(i);
      if (tool == null || tool.isBlank()) {
        at.problem("uncacheableTools[" + i + "]", "empty tool name");
      }
    }
  }

  /** Who may share a cached answer. */
  public enum Scope implements Choice {
    /** Only the team that asked (the default). */
    TEAM,
    /** Every team of the same tier. */
    TIER,
    /** Everyone. */
    GLOBAL;
  }

  /** Whether answers for {@code tier} are read from and written to the cache. */
  public boolean enabledFor(Tier tier) {
    return tiers.get(tier);
  }
}
