package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class DegradedHeaderInterceptorTest {
  private final OneStage run = new OneStage();
  private final DegradedHeaderInterceptor stage = new DegradedHeaderInterceptor();

  @Test
  void theHeaderListsTheStepsRecordedOnTheRequestByTheTimeTheAnswerComesBack() {
    run.answer = request -> {
      request.setAttribute(RequestAttributes.DEGRADED, List.of("trimmed", "temperature", "context_fit"));
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    };

    GatewayResponse response = run.send(stage, Tier.SILVER, ShapingPolicy.Plan.none(Tier.SILVER),
        Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"));

    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("trimmed,temperature,context_fit");
  }

  @Test
  void noStepsNoHeader() {
    GatewayResponse response = run.send(stage, Tier.SILVER, ShapingPolicy.Plan.none(Tier.SILVER),
        Route.CHAT_COMPLETIONS, OneStage.chat("", "hi"));

    assertThat(response.headers().get("x-spillway-degraded")).isNull();

    run.answer = request -> {
      request.setAttribute(RequestAttributes.DEGRADED, List.of());
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    };
    assertThat(run.send(stage, Tier.SILVER, ShapingPolicy.Plan.none(Tier.SILVER), Route.CHAT_COMPLETIONS,
        OneStage.chat("", "hi")).headers().get("x-spillway-degraded")).as("every step taken back").isNull();
  }

  @Test
  void aRequestShapingLeavesAloneGetsNoHeaderFromIt() {
    run.answer = request -> {
      request.setAttribute(RequestAttributes.DEGRADED, List.of("context_fit"));
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    };

    GatewayResponse response = run.send(stage, Tier.SILVER, ShapingPolicy.Plan.none(Tier.SILVER), Route.EMBEDDINGS,
        "{\"model\":\"text-embedding-3-small\",\"input\":\"hi\"}");

    assertThat(response.headers().get("x-spillway-degraded")).isNull();
  }
}
