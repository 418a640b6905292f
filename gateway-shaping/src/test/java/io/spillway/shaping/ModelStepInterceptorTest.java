package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class ModelStepInterceptorTest {
  private final OneStage run = new OneStage();
  private static final String SINGLE_LINE =
      "{\"model\":\"gpt-4o\",\"prompt\":\"def add(a, b):\\n    return \",\"max_tokens\":32,\"stop\":[\"\\n\"]}";

  private ModelStepInterceptor stage(String yaml) {
    return new ModelStepInterceptor(OneStage.config(yaml), run.metrics);
  }

  @Test
  void aSingleLineCompletionGoesToTheSmallerModel() {
    run.send(stage(""), Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.MODEL), Route.COMPLETIONS, SINGLE_LINE);

    assertThat(run.upstream.body().get("model").asText()).isEqualTo("gpt-4o-mini");
    assertThat(run.upstream.attribute(RequestAttributes.MODEL_REWRITTEN_FROM)).isEqualTo("gpt-4o");
    assertThat(RequestOutcome.of(run.upstream).degraded()).containsExactly("model");
    assertThat(run.counter("spillway.shaping.steps", "step", "model", "tier", "bronze")).isEqualTo(1);
  }

  @Test
  void withoutTheStepInThePlanTheModelStays() {
    run.send(stage(""), Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.TRIM, LadderStep.DOWNGRADE),
        Route.COMPLETIONS, SINGLE_LINE);

    assertThat(run.upstreamBytes()).isEqualTo(SINGLE_LINE);
    assertThat(run.upstream.attribute(RequestAttributes.MODEL_REWRITTEN_FROM)).isNull();
  }

  @Test
  void theScenarioIsJudgedOnTheRequestAsTheClientSentIt() throws IOException {
    // The client asked for 80 tokens (no single-line completion); an earlier step lowered it to 56.
    String asSent = "{\"model\":\"gpt-4o\",\"prompt\":\"x = \",\"max_tokens\":80}";
    String lowered = "{\"model\":\"gpt-4o\",\"prompt\":\"x = \",\"max_tokens\":56}";
    ObjectNode clientBody = (ObjectNode) Json.parse(asSent.getBytes(StandardCharsets.UTF_8));

    run.send(stage(""), Tier.BRONZE, Route.COMPLETIONS, lowered, request -> {
      request.setAttribute(ShapingAttributes.PLAN, OneStage.plan(Tier.BRONZE, LadderStep.MODEL));
      request.setAttribute(ShapingAttributes.CLIENT_BODY, clientBody);
    });
    assertThat(run.upstream.body().get("model").asText()).isEqualTo("gpt-4o");

    run.send(stage(""), Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.MODEL), Route.COMPLETIONS, lowered);
    assertThat(run.upstream.body().get("model").asText()).as("56 tokens as sent is single-line").isEqualTo("gpt-4o-mini");
  }

  @Test
  void aShortPromptRuleCountsThePromptsTokens() {
    ModelStepInterceptor nano = stage("""
        shaping:
          models:
            - { from: "gpt-4.1*", to: gpt-4.1-nano, when: short-prompt }
        """);
    run.send(nano, Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.MODEL), Route.CHAT_COMPLETIONS,
        OneStage.chat("", "Name three colours.").replace("\"gpt-4o\"", "\"gpt-4.1-2025-04-14\""));
    assertThat(run.upstream.body().get("model").asText()).isEqualTo("gpt-4.1-nano");

    run.send(nano, Tier.BRONZE, OneStage.plan(Tier.BRONZE, LadderStep.MODEL), Route.CHAT_COMPLETIONS,
        OneStage.chatWithFile("").replace("\"gpt-4o\"", "\"gpt-4.1\""));
    assertThat(run.upstream.body().get("model").asText()).as("a long prompt is no short-prompt").isEqualTo("gpt-4.1");
  }
}
