package io.spillway.shaping;

import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.Tier;
import io.spillway.shaping.risk.RiskIndex;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The one place that decides, per request, how far down the degradation ladder a request goes.
 *
 * <p>A tier's mode ({@code shaping.tiers.<tier>.degrade}, else {@code shaping.degrade}) is
 * {@code never} (no ladder), {@code pressure} or {@code always}. Pressure comes from the breaker
 * being open or half-open, the tier's pool past its soft band, the risk index above its threshold
 * (for the tiers {@code shaping.risk.tiers} names), or {@code always}. Each source reaches a step
 * ({@code shaping.ladder.*}); the deepest one wins, and the tier's {@code steps} filter what it may
 * take. Thread-safe.
 */
public final class ShapingPolicy {
  private final ShapingConfig config;
  private final PressureSignals signals;
  private final RiskIndex risk;
  private final Map<Tier, TierRules> tiers = new EnumMap<>(Tier.class);
  private final Set<Tier> riskTiers = EnumSet.noneOf(Tier.class);
  private final LadderStep onRisk;
  private final LadderStep onSoftBand;
  private final LadderStep onBreaker;
  private final LadderStep onAlways;

  /**
   * @param risk the risk index, or null when it is off
   */
  public ShapingPolicy(ShapingConfig config, PressureSignals signals, RiskIndex risk) {
    this.config = config;
    this.signals = signals;
    this.risk = config.risk().enabled() ? risk : null;
    for (Tier tier : Tier.values()) {
      ShapingConfig.TierConfig t = config.tier(tier);
      EnumSet<LadderStep> steps = EnumSet.noneOf(LadderStep.class);
      t.steps().forEach(step -> steps.add(LadderStep.of(step)));
      ShapingConfig.Mode mode = t.degrade() != null ? t.degrade() : config.degrade();
      tiers.put(tier, new TierRules(mode, steps));
    }
    riskTiers.addAll(config.risk().tiers());
    this.onRisk = LadderStep.of(config.ladder().risk());
    this.onSoftBand = LadderStep.of(config.ladder().softBand());
    this.onBreaker = LadderStep.of(config.ladder().breaker());
    this.onAlways = LadderStep.of(config.ladder().always());
  }

  private record TierRules(ShapingConfig.Mode mode, EnumSet<LadderStep> steps) {}

  /**
   * What applies to a request of {@code tier} now.
   *
   * @param pressure the sources of pressure ({@code always}, {@code breaker}, {@code soft-band},
   *     {@code risk}); empty when there is none
   * @param steps the ladder steps the request takes
   */
  public record Plan(Tier tier, List<String> pressure, Set<LadderStep> steps) {
    public static Plan none(Tier tier) {
      return new Plan(tier, List.of(), Collections.emptySet());
    }

    public boolean underPressure() {
      return !pressure.isEmpty();
    }

    public boolean allows(LadderStep step) {
      return steps.contains(step);
    }
  }

  public Plan plan(Tier tier) {
    TierRules rules = tiers.get(tier);
    if (rules.mode() == ShapingConfig.Mode.NEVER) {
      return Plan.none(tier);
    }
    List<String> pressure = new ArrayList<>(2);
    LadderStep deepest = null;
    if (rules.mode() == ShapingConfig.Mode.ALWAYS) {
      pressure.add("always");
      deepest = onAlways;
    }
    if (signals.cloudDegraded()) {
      pressure.add("breaker");
      deepest = deeper(deepest, onBreaker);
    }
    if (signals.poolPastSoftBand(tier)) {
      pressure.add("soft-band");
      deepest = deeper(deepest, onSoftBand);
    }
    if (risk != null && riskTiers.contains(tier) && risk.active()) {
      pressure.add("risk");
      deepest = deeper(deepest, onRisk);
    }
    if (deepest == null) {
      return Plan.none(tier);
    }
    EnumSet<LadderStep> steps = EnumSet.noneOf(LadderStep.class);
    for (LadderStep step : LadderStep.values()) {
      if (step.compareTo(deepest) <= 0 && rules.steps().contains(step)) {
        steps.add(step);
      }
    }
    return new Plan(tier, List.copyOf(pressure), Collections.unmodifiableSet(steps));
  }

  private static LadderStep deeper(LadderStep a, LadderStep b) {
    return a == null || b.compareTo(a) > 0 ? b : a;
  }

  public ShapingConfig config() {
    return config;
  }
}
