package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class LocalStepInterceptorTest {
  private final OneStage run = new OneStage();
  private final LocalStepInterceptor stage = new LocalStepInterceptor(run.metrics);

  {
    run.answer = request -> GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theStepAsksForLocalAndIsCountedForEveryTier() {
    for (Tier tier : Tier.values()) {
      run.send(stage, tier, OneStage.plan(tier, LadderStep.values()), Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"));

      assertThat(run.upstream.attribute(RequestAttributes.PREFER_LOCAL)).isTrue();
      assertThat(run.counter("spillway.shaping.steps", "step", "local", "tier", tier.tag())).isEqualTo(1);
    }
  }

  @Test
  void theStepLeavesTheDegradedListToTheRouterWhichAloneKnowsWhetherLocalServed() {
    run.send(stage, Tier.BRONZE, Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"), request -> {
      request.setAttribute(ShapingAttributes.PLAN, OneStage.plan(Tier.BRONZE, LadderStep.values()));
      ShapingAttributes.addDegraded(request, List.of("temperature"));
    });

    assertThat(run.upstream.attribute(RequestAttributes.PREFER_LOCAL)).isTrue();
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("temperature");
    assertThat(RequestOutcome.of(run.upstream).localByPreference()).isFalse();
  }

  @Test
  void withoutTheStepInThePlanNothingIsAsked() {
    run.send(stage, Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM, LadderStep.DOWNGRADE, LadderStep.MODEL),
        Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"));

    assertThat(run.upstream.attribute(RequestAttributes.PREFER_LOCAL)).isNull();
    assertThat(RequestOutcome.of(run.upstream).degraded()).isEmpty();
    assertThat(run.counter("spillway.shaping.steps", "step", "local", "tier", "bronze")).isEqualTo(0);
  }
}
