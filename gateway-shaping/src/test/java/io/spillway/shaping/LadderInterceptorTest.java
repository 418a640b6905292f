package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import org.junit.jupiter.api.Test;

class LadderInterceptorTest {
  private final OneStage run = new OneStage();

  private static final PressureSignals BREAKER_OPEN = new PressureSignals() {
    @Override
    public boolean cloudDegraded() {
      return true;
    }

    @Override
    public boolean poolPastSoftBand(Tier tier) {
      return false;
    }
  };

  private ShapingPolicy.Plan planFor(String yaml, PressureSignals signals, Tier tier) {
    LadderInterceptor stage = new LadderInterceptor(new ShapingPolicy(OneStage.config(yaml), signals, null));
    run.send(stage, tier, Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"), request -> { });
    return run.upstream.attribute(ShapingAttributes.PLAN);
  }

  @Test
  void thePolicysPlanForTheTiersPressureIsLeftOnTheRequest() {
    ShapingPolicy.Plan bronze = planFor("shaping:\n  degrade: always\n", PressureSignals.NONE, Tier.BRONZE);
    assertThat(bronze.pressure()).containsExactly("always");
    assertThat(bronze.steps()).containsExactly(LadderStep.TRIM, LadderStep.DOWNGRADE, LadderStep.MODEL);

    ShapingPolicy.Plan gold = planFor("shaping:\n  degrade: always\n", PressureSignals.NONE, Tier.GOLD);
    assertThat(gold.underPressure()).isFalse();
    assertThat(gold.steps()).isEmpty();
  }

  @Test
  void anOpenBreakerPlansSilverAllTheWayToLocal() {
    ShapingPolicy.Plan silver = planFor("", BREAKER_OPEN, Tier.SILVER);

    assertThat(silver.pressure()).containsExactly("breaker");
    assertThat(silver.allows(LadderStep.LOCAL)).isTrue();
  }

  @Test
  void withoutPressureThePlanIsNoLadder() {
    assertThat(planFor("", PressureSignals.NONE, Tier.BRONZE).steps()).isEmpty();
  }

  @Test
  void aRequestWithoutACallerGetsNoPlan() {
    LadderInterceptor stage = new LadderInterceptor(
        new ShapingPolicy(OneStage.config("shaping:\n  degrade: always\n"), PressureSignals.NONE, null));
    run.send(stage, null, Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"), request -> { });

    assertThat(run.upstream.attribute(ShapingAttributes.PLAN)).isNull();
  }
}
