package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import java.util.List;
import org.junit.jupiter.api.Test;

class DowngradeInterceptorTest {
  private final OneStage run = new OneStage();
  private final DowngradeInterceptor stage = new DowngradeInterceptor(OneStage.config("").downgrade(), run.metrics);

  @Test
  void theStepTightensOnlyWhatTheRequestSetsAndOnlyDownwards() {
    run.send(stage, Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM, LadderStep.DOWNGRADE),
        Route.CHAT_COMPLETIONS, OneStage.chat("\"temperature\":0.9,\"max_tokens\":1000,", "hi"));

    assertThat(run.upstream.body().get("temperature").asDouble()).isEqualTo(0.3);
    assertThat(run.upstream.body().get("max_tokens").asInt()).isEqualTo(700);
    assertThat(run.upstream.body().has("top_p")).isFalse();
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("temperature", "max_tokens");
    assertThat(run.counter("spillway.shaping.tokens.saved", "step", "max_tokens")).isEqualTo(300);
    assertThat(run.counter("spillway.shaping.steps", "step", "temperature", "tier", "bronze")).isEqualTo(1);
  }

  @Test
  void itAppendsToTheStepsEarlierStagesRecorded() {
    run.send(stage, Tier.SILVER, Route.CHAT_COMPLETIONS, OneStage.chat("\"top_p\":1,", "hi"), request -> {
      request.setAttribute(ShapingAttributes.PLAN, OneStage.plan(Tier.SILVER, LadderStep.DOWNGRADE));
      ShapingAttributes.addDegraded(request, List.of("trimmed"));
    });

    assertThat(run.upstream.body().get("top_p").asDouble()).isEqualTo(0.7);
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("trimmed", "top_p");
  }

  @Test
  void withoutTheStepInThePlanTheRequestPassesAsSent() {
    String request = OneStage.chat("\"temperature\":0.9,\"max_tokens\":1000,", "hi");

    run.send(stage, Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM), Route.CHAT_COMPLETIONS, request);

    assertThat(run.upstreamBytes()).isEqualTo(request);
    assertThat(RequestOutcome.of(run.upstream).degraded()).isEmpty();
  }

  @Test
  void aRequestAlreadyWithinTheLimitsPassesAsSent() {
    String request = OneStage.chat("\"temperature\":0.2,\"top_p\":0.5,", "hi");

    run.send(stage, Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.DOWNGRADE), Route.CHAT_COMPLETIONS, request);

    assertThat(run.upstreamBytes()).isEqualTo(request);
    assertThat(RequestOutcome.of(run.upstream).degraded()).isEmpty();
  }
}
