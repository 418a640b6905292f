package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import org.junit.jupiter.api.Test;

class SignalInterceptorTest {
  private final OneStage run = new OneStage();
  private static final String HOT =
      OneStage.chat("\"temperature\":1.5,\"max_tokens\":4000,", "go");

  private SignalInterceptor stage(String yaml) {
    return new SignalInterceptor(OneStage.config(yaml).signal(), run.metrics);
  }

  @Test
  void hotSamplingIsLowSignalOnEveryTierWithoutPressureAndTheAnswerSaysSo() {
    for (Tier tier : Tier.values()) {
      GatewayResponse response = run.send(stage(""), tier, ShapingPolicy.Plan.none(tier), Route.CHAT_COMPLETIONS, HOT);

      assertThat(run.upstream.attribute(RequestAttributes.LOW_SIGNAL)).isTrue();
      assertThat(response.headers().get("x-spillway-signal")).isEqualTo("low");
      assertThat(run.counter("spillway.shaping.low_signal", "reason", "hot-sampling", "tier", tier.tag())).isEqualTo(1);
    }
  }

  @Test
  void anOrdinaryRequestIsNeitherMarkedNorChanged() {
    String request = OneStage.chat("\"temperature\":0.5,\"max_tokens\":4000,", "go");

    GatewayResponse response = run.send(stage(""), Tier.BRONZE, ShapingPolicy.Plan.none(Tier.BRONZE),
        Route.CHAT_COMPLETIONS, request);

    assertThat(run.upstream.attribute(RequestAttributes.LOW_SIGNAL)).isNull();
    assertThat(response.headers().get("x-spillway-signal")).isNull();
    assertThat(run.upstreamBytes()).isEqualTo(request);
  }

  @Test
  void scoringTurnedOffMarksNothing() {
    GatewayResponse response = run.send(stage("shaping:\n  signal: { enabled: false }\n"), Tier.BRONZE,
        ShapingPolicy.Plan.none(Tier.BRONZE), Route.CHAT_COMPLETIONS, HOT);

    assertThat(run.upstream.attribute(RequestAttributes.LOW_SIGNAL)).isNull();
    assertThat(response.headers().get("x-spillway-signal")).isNull();
  }

  @Test
  void embeddingsAreNotScored() {
    GatewayResponse response = run.send(stage(""), Tier.BRONZE, ShapingPolicy.Plan.none(Tier.BRONZE), Route.EMBEDDINGS,
        "{\"model\":\"text-embedding-3-small\",\"input\":\"go\",\"temperature\":1.5,\"max_tokens\":4000}");

    assertThat(run.upstream.attribute(RequestAttributes.LOW_SIGNAL)).isNull();
    assertThat(response.headers().get("x-spillway-signal")).isNull();
  }
}
