package io.spillway.quota.store;

import io.spillway.core.pipeline.Tier;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * One month's spend as a usage store holds it, in nano-dollars (10⁻⁹ USD): exact integers, so
 * amounts added by many requests and replicas sum without rounding drift.
 *
 * @param nanosByTeam team → tier → nano-dollars spent
 * @param unpricedByTier cloud requests whose model had no price, per tier
 */
public record MonthSpend(Map<String, Map<Tier, Long>> nanosByTeam, Map<Tier, Long> unpricedByTier) {
  public static final MonthSpend EMPTY = new MonthSpend(Map.of(), Map.of());

  public MonthSpend {
    Map<String, Map<Tier, Long>> teams = new TreeMap<>();
    nanosByTeam.forEach((team, tiers) -> teams.put(team, Map.copyOf(tiers)));
    nanosByTeam = Collections.unmodifiableMap(teams);
    unpricedByTier = Map.copyOf(unpricedByTier);
  }

  /** Nano-dollars spent by {@code team}, all tiers. */
  public long team(String team) {
    return nanosByTeam.getOrDefault(team, Map.of()).values().stream().mapToLong(Long::longValue).reduce(0, Saturating::add);
  }

  /** Nano-dollars spent in {@code tier}, all teams. */
  public long tier(Tier tier) {
    return nanosByTeam.values().stream().mapToLong(tiers -> tiers.getOrDefault(tier, 0L)).reduce(0, Saturating::add);
  }

  public long unpriced(Tier tier) {
    return unpricedByTier.getOrDefault(tier, 0L);
  }

  /** These amounts with {@code team}'s replaced by {@code tiers} (a fresher read of one team). */
  public MonthSpend withTeam(String team, Map<Tier, Long> tiers) {
    Map<String, Map<Tier, Long>> teams = new TreeMap<>(nanosByTeam);
    teams.put(team, tiers);
    return new MonthSpend(teams, unpricedByTier);
  }

  /** This month's amounts plus {@code other}'s (a shared store's last known totals plus local ones). */
  public MonthSpend plus(MonthSpend other) {
    Map<String, Map<Tier, Long>> teams = new TreeMap<>();
    for (MonthSpend part : new MonthSpend[] {this, other}) {
      part.nanosByTeam.forEach((team, tiers) -> tiers.forEach((tier, nanos) ->
          teams.computeIfAbsent(team, t -> new EnumMap<>(Tier.class)).merge(tier, nanos, Saturating::add)));
    }
    Map<Tier, Long> unpriced = new EnumMap<>(Tier.class);
    unpriced.putAll(unpricedByTier);
    other.unpricedByTier.forEach((tier, n) -> unpriced.merge(tier, n, Saturating::add));
    return new MonthSpend(teams, unpriced);
  }
}
