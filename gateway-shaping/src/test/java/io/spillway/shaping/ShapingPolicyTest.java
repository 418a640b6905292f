package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.ConfigLoader;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.Tier;
import io.spillway.shaping.risk.RiskIndex;
import io.spillway.core.testing.FakeClock;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ShapingPolicyTest {
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");

  private static ShapingConfig config(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test", yaml).shaping();
  }

  /** Pressure signals a test sets by hand. */
  static final class Signals implements PressureSignals {
    boolean breaker;
    Set<Tier> pastSoftBand = EnumSet.noneOf(Tier.class);

    @Override
    public boolean cloudDegraded() {
      return breaker;
    }

    @Override
    public boolean poolPastSoftBand(Tier tier) {
      return pastSoftBand.contains(tier);
    }
  }

  private final Signals signals = new Signals();

  @Test
  void noPressureMeansNoLadder() {
    ShapingPolicy policy = new ShapingPolicy(config(""), signals, null);
    for (Tier tier : Tier.values()) {
      assertThat(policy.plan(tier).underPressure()).isFalse();
      assertThat(policy.plan(tier).steps()).isEmpty();
    }
  }

  @Test
  void eachSourceReachesItsConfiguredStep() {
    ShapingPolicy policy = new ShapingPolicy(config(""), signals, null);

    signals.pastSoftBand.add(Tier.SILVER);
    assertThat(policy.plan(Tier.SILVER).steps())
        .containsExactly(LadderStep.TRIM, LadderStep.DOWNGRADE, LadderStep.MODEL);
    assertThat(policy.plan(Tier.SILVER).pressure()).containsExactly("soft-band");
    assertThat(policy.plan(Tier.BRONZE).steps()).isEmpty();

    signals.breaker = true;
    assertThat(policy.plan(Tier.SILVER).steps()).containsExactly(LadderStep.values());
    assertThat(policy.plan(Tier.SILVER).pressure()).containsExactly("breaker", "soft-band");
    assertThat(policy.plan(Tier.BRONZE).steps()).containsExactly(LadderStep.values());
  }

  @Test
  void goldIsNeverDegradedByDefaultWhateverThePressure() {
    signals.breaker = true;
    signals.pastSoftBand.add(Tier.GOLD);
    ShapingPolicy policy = new ShapingPolicy(config("shaping:\n  degrade: always\n"), signals, null);
    assertThat(policy.plan(Tier.GOLD).steps()).isEmpty();
  }

  @Test
  void degradeNeverTurnsTheLadderOffForEveryTier() {
    signals.breaker = true;
    ShapingPolicy policy = new ShapingPolicy(config("shaping:\n  degrade: never\n"), signals, null);
    assertThat(policy.plan(Tier.BRONZE).underPressure()).isFalse();
  }

  @Test
  void alwaysIsPressureOfItsOwn() {
    ShapingPolicy policy = new ShapingPolicy(config("shaping:\n  tiers:\n    bronze: { degrade: always }\n"), signals,
        null);
    assertThat(policy.plan(Tier.BRONZE).pressure()).containsExactly("always");
    assertThat(policy.plan(Tier.BRONZE).steps()).containsExactly(LadderStep.TRIM, LadderStep.DOWNGRADE, LadderStep.MODEL);
    assertThat(policy.plan(Tier.SILVER).underPressure()).isFalse();
  }

  @Test
  void ladderDepthsAndTierStepsAreConfigurable() {
    ShapingPolicy policy = new ShapingPolicy(config("""
        shaping:
          degrade: always
          ladder: { always: local }
          tiers:
            silver: { steps: [trim, local] }
        """), signals, null);
    assertThat(policy.plan(Tier.BRONZE).steps()).containsExactly(LadderStep.values());
    assertThat(policy.plan(Tier.SILVER).steps()).containsExactly(LadderStep.TRIM, LadderStep.LOCAL);
  }

  @Test
  void theRiskIndexTurnsTheLadderOnForItsTiersOnly() {
    RiskIndex risk = new RiskIndex(ShapingConfig.RiskConfig.DEFAULTS, clock);
    ShapingPolicy policy = new ShapingPolicy(config(""), signals, risk);
    for (int i = 0; i < 200; i++) {
      risk.record(5_000, true);
      clock.advance(Duration.ofMillis(500));
    }
    assertThat(policy.plan(Tier.BRONZE).pressure()).containsExactly("risk");
    assertThat(policy.plan(Tier.SILVER).steps()).containsExactly(LadderStep.TRIM, LadderStep.DOWNGRADE, LadderStep.MODEL);
    assertThat(policy.plan(Tier.GOLD).underPressure()).isFalse();

    ShapingPolicy riskForAll = new ShapingPolicy(
        config("shaping:\n  risk: { tiers: [gold, silver, bronze] }\n  tiers:\n    gold: { degrade: pressure }\n"),
        signals, risk);
    assertThat(riskForAll.plan(Tier.GOLD).pressure()).containsExactly("risk");
  }
}
