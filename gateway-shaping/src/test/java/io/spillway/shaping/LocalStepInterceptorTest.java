package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class LocalStepInterceptorTest {
  private final OneStage run = new OneStage();
  private final LocalStepInterceptor stage = new LocalStepInterceptor(run.metrics);

  private void servedBy(String backend) {
    run.answer = request -> {
      RequestOutcome.of(request).servedBy(backend);
      if (backend.equals("local")) {
        RequestOutcome.of(request).degrade("context_fit");
      }
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    };
  }

  @Test
  void theStepAsksForLocalAndStaysListedWhenLocalServed() {
    servedBy("local");

    run.send(stage, Tier.SILVER, OneStage.plan(Tier.SILVER, LadderStep.values()), Route.CHAT_COMPLETIONS,
        OneStage.chat("", "hi"));

    assertThat(run.upstream.attribute(RequestAttributes.PREFER_LOCAL)).isTrue();
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("local", "context_fit");
    assertThat(run.counter("spillway.shaping.steps", "step", "local", "tier", "silver")).isEqualTo(1);
  }

  @Test
  void theStepIsTakenBackWhenTheRouterSentTheRequestToTheCloudAnyway() {
    servedBy("cloud"); // the breaker made it the half-open probe

    run.send(stage, Tier.BRONZE, Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"), request -> {
      request.setAttribute(ShapingAttributes.PLAN, OneStage.plan(Tier.BRONZE, LadderStep.values()));
      ShapingAttributes.addDegraded(request, List.of("temperature"));
    });

    assertThat(run.upstream.attribute(RequestAttributes.PREFER_LOCAL)).isTrue();
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("temperature");
  }

  @Test
  void withoutTheStepInThePlanNothingIsAsked() {
    servedBy("cloud");

    run.send(stage, Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM, LadderStep.DOWNGRADE, LadderStep.MODEL),
        Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"));

    assertThat(run.upstream.attribute(RequestAttributes.PREFER_LOCAL)).isNull();
    assertThat(RequestOutcome.of(run.upstream).degraded()).isEmpty();
  }
}
