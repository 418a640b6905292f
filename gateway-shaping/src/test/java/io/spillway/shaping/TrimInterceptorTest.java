package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.SampleSources;
import org.junit.jupiter.api.Test;

class TrimInterceptorTest {
  private final OneStage run = new OneStage();

  private TrimInterceptor stage(String yaml) {
    return new TrimInterceptor(OneStage.config(yaml), run.metrics);
  }

  private String upstreamMessage() {
    return run.upstream.body().at("/messages/0/content").asText();
  }

  @Test
  void underPressureOversizedCodeIsTrimmedToWhatMattersAndRecorded() {
    GatewayResponse response = run.send(stage(""), Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM),
        Route.CHAT_COMPLETIONS, OneStage.chatWithFile("\"temperature\":0.9,"));

    assertThat(upstreamMessage()).contains(SampleSources.FAILING_FUNCTION, "... (context trimmed)",
        SampleSources.TRACE_LAST_LINE).startsWith("This fails:\n```python\n").endsWith("```\nWhy?");
    assertThat(upstreamMessage().split("\n").length).isBetween(60, 400);
    assertThat(run.upstream.body().get("temperature").asDouble()).as("not this stage's business").isEqualTo(0.9);
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("trimmed");
    assertThat(response.headers().get("x-spillway-degraded")).as("written by another stage").isNull();
    assertThat(run.counter("spillway.shaping.steps", "step", "trimmed", "tier", "bronze")).isEqualTo(1);
    assertThat(run.counter("spillway.shaping.tokens.saved", "step", "trimmed")).isGreaterThan(5000);
  }

  @Test
  void withoutPressureOnlyARequestAboveItsTiersThresholdIsTrimmed() {
    String request = OneStage.chatWithFile("");
    TrimInterceptor defaults = stage("");

    run.send(defaults, Tier.SILVER, ShapingPolicy.Plan.none(Tier.SILVER), Route.CHAT_COMPLETIONS, request);
    assertThat(run.upstreamBytes()).as("under silver's 64,000 tokens").isEqualTo(request);
    assertThat(RequestOutcome.of(run.upstream).degraded()).isEmpty();

    run.send(stage("shaping:\n  tiers:\n    silver: { trimAboveTokens: 4000 }\n"), Tier.SILVER,
        ShapingPolicy.Plan.none(Tier.SILVER), Route.CHAT_COMPLETIONS, request);
    assertThat(upstreamMessage()).contains(SampleSources.FAILING_FUNCTION).hasSizeLessThan(request.length() / 3);
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("trimmed");
  }

  @Test
  void goldIsNeverTrimmedWithoutPressureByDefault() {
    String request = OneStage.chatWithFile("");

    run.send(stage(""), Tier.GOLD, ShapingPolicy.Plan.none(Tier.GOLD), Route.CHAT_COMPLETIONS, request);

    assertThat(run.upstreamBytes()).isEqualTo(request);
  }

  @Test
  void aSmallRequestUnderPressurePassesAsTheClientSentIt() {
    String request = OneStage.chat("", "print('hi')");

    run.send(stage(""), Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM), Route.CHAT_COMPLETIONS, request);

    assertThat(run.upstreamBytes()).isEqualTo(request);
    assertThat(RequestOutcome.of(run.upstream).degraded()).isEmpty();
  }

  @Test
  void eachTierTrimsWithItsOwnSettings() {
    String request = OneStage.chatWithFile("");
    run.send(stage("shaping:\n  tiers:\n    bronze: { keepLastLines: 10, keepDefinitions: 1 }\n"), Tier.BRONZE,
        OneStage.plan(Tier.BRONZE, LadderStep.TRIM), Route.CHAT_COMPLETIONS, request);
    int tight = upstreamMessage().split("\n").length;
    run.send(stage(""), Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM), Route.CHAT_COMPLETIONS, request);
    int normal = upstreamMessage().split("\n").length;

    assertThat(tight).isLessThan(normal);
  }
}
