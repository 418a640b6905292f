package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class StopRewriteInterceptorTest {
  private final OneStage run = new OneStage();
  private static final String RISKY = OneStage.chat("\"stop\":\"\\n\\n\",", "code");

  private StopRewriteInterceptor stage(String yaml) {
    return new StopRewriteInterceptor(OneStage.config(yaml).stop(), run.metrics);
  }

  @Test
  void underPressureARiskyStopLeavesTheRequestAndTheAnswerIsCutAtIt() {
    run.answer = request -> GatewayResponse.json(200, """
        {"choices":[{"index":0,"message":{"role":"assistant","content":"x = 1\\n\\ny = 2"},"finish_reason":"length"}]}
        """.getBytes(StandardCharsets.UTF_8));

    GatewayResponse response = run.send(stage(""), Tier.SILVER, OneStage.plan(Tier.SILVER), Route.CHAT_COMPLETIONS,
        RISKY);

    assertThat(run.upstream.body().has("stop")).isFalse();
    assertThat(run.upstream.body().get("max_tokens").asInt()).isEqualTo(512);
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("stop");
    assertThat(new String(response.body(), StandardCharsets.UTF_8)).contains("\"content\":\"x = 1\"", "\"stop\"");
    assertThat(run.counter("spillway.shaping.steps", "step", "stop", "tier", "silver")).isEqualTo(1);
  }

  @Test
  void withoutPressureTheStopStaysByDefault() {
    run.send(stage(""), Tier.SILVER, ShapingPolicy.Plan.none(Tier.SILVER), Route.CHAT_COMPLETIONS, RISKY);

    assertThat(run.upstreamBytes()).isEqualTo(RISKY);
    assertThat(RequestOutcome.of(run.upstream).degraded()).isEmpty();
  }

  @Test
  void applyAlwaysRewritesWithoutPressureAndApplyNeverNotEvenUnderIt() {
    run.send(stage("shaping:\n  stop: { apply: always }\n"), Tier.GOLD, ShapingPolicy.Plan.none(Tier.GOLD),
        Route.CHAT_COMPLETIONS, RISKY);
    assertThat(run.upstream.body().has("stop")).isFalse();

    run.send(stage("shaping:\n  stop: { apply: never }\n"), Tier.SILVER, OneStage.plan(Tier.SILVER),
        Route.CHAT_COMPLETIONS, RISKY);
    assertThat(run.upstreamBytes()).isEqualTo(RISKY);
  }

  @Test
  void anOrdinaryStopIsLeftAlone() {
    String request = OneStage.chat("\"stop\":[\"END\"],", "code");

    run.send(stage(""), Tier.SILVER, OneStage.plan(Tier.SILVER), Route.CHAT_COMPLETIONS, request);

    assertThat(run.upstreamBytes()).isEqualTo(request);
  }
}
