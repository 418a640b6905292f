package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.ConfigLoader;
import io.spillway.config.ShapingConfig;
import io.spillway.core.api.OutcomeHeadersInterceptor;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.core.testing.SampleSources;
import io.spillway.shaping.risk.RiskIndex;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The shaping stages composed, in a pipeline with a recording terminal: no Netty, no HTTP. */
class ShapingStagesTest {
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  private GatewayRequest upstream;
  private Function<GatewayRequest, GatewayResponse> answer =
      request -> GatewayResponse.json(200, "{\"choices\":[]}".getBytes(StandardCharsets.UTF_8));

  private static ShapingConfig config(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test", yaml).shaping();
  }

  private GatewayResponse send(ShapingConfig config, PressureSignals signals, RiskIndex risk, Tier tier, Route route,
      String json) {
    List<Interceptor> stages = new ArrayList<>();
    stages.add(new OutcomeHeadersInterceptor()); // writes x-spillway-degraded from the steps shaping recorded
    stages.add(chain -> {
      chain.request().setAttribute(RequestAttributes.CALLER, new Caller("team", tier, "k1"));
      return chain.proceed(chain.request());
    });
    stages.addAll(ShapingStages.create(config, signals, risk, clock, new ShapingMetrics(meters, Runnable::run)));
    Pipeline pipeline = new Pipeline(stages, Terminal.blocking(request -> {
      upstream = request;
      return answer.apply(request);
    }));
    byte[] raw = json.getBytes(StandardCharsets.UTF_8);
    try {
      ObjectNode body = (ObjectNode) Json.parse(raw);
      return pipeline.execute(GatewayRequest.create("req-1", route, Headers.EMPTY, body, raw, clock.instant()));
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private GatewayResponse send(ShapingConfig config, Tier tier, String json) {
    return send(config, PressureSignals.NONE, null, tier, Route.CHAT_COMPLETIONS, json);
  }

  private static String chatWithFile(String extra) {
    String file = SampleSources.pythonModuleWithTraceback(2000);
    return "{\"model\":\"gpt-4o\"," + extra + "\"messages\":[{\"role\":\"system\",\"content\":\"You fix bugs.\"},"
        + "{\"role\":\"user\",\"content\":" + quote("This fails:\n```python\n" + file + "```\nWhy?") + "}]}";
  }

  private static String quote(String text) {
    return Json.MAPPER.getNodeFactory().textNode(text).toString();
  }

  private String upstreamUserMessage() {
    return upstream.body().at("/messages/1/content").asText();
  }

  @Test
  void bronzeUnderDegradeAlwaysIsTrimmedAndTightenedAndTheClientIsTold() {
    String request = chatWithFile("\"temperature\":0.9,\"top_p\":1,\"max_tokens\":1000,");

    GatewayResponse response = send(config("shaping:\n  degrade: always\n"), Tier.BRONZE, request);

    String message = upstreamUserMessage();
    assertThat(message.split("\n").length).isBetween(60, 400);
    assertThat(message).contains(SampleSources.FAILING_FUNCTION, "... (context trimmed)", SampleSources.TRACE_LAST_LINE);
    assertThat(message).startsWith("This fails:\n```python\n").endsWith("```\nWhy?");
    assertThat(upstream.body().get("temperature").asDouble()).isEqualTo(0.3);
    assertThat(upstream.body().get("top_p").asDouble()).isEqualTo(0.7);
    assertThat(upstream.body().get("max_tokens").asInt()).isEqualTo(700);
    assertThat(upstream.body().at("/messages/0/content").asText()).isEqualTo("You fix bugs.");
    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("trimmed,temperature,top_p,max_tokens");
    assertThat(RequestOutcome.of(upstream).degraded())
        .containsExactly("trimmed", "temperature", "top_p", "max_tokens");
    assertThat(meters.get("spillway.shaping.tokens.saved").tag("step", "trimmed").counter().count()).isGreaterThan(5000);
    assertThat(meters.get("spillway.shaping.tokens.saved").tag("step", "max_tokens").counter().count()).isEqualTo(300);
    assertThat(meters.get("spillway.shaping.steps").tags("step", "trimmed", "tier", "bronze").counter().count())
        .isEqualTo(1);
  }

  @Test
  void goldIsUntouchedUnderDegradeAlways() {
    String request = chatWithFile("\"temperature\":0.9,\"max_tokens\":1000,");

    GatewayResponse response = send(config("shaping:\n  degrade: always\n"), Tier.GOLD, request);

    assertThat(new String(upstream.bodyBytes(), StandardCharsets.UTF_8)).isEqualTo(request);
    assertThat(response.headers().get("x-spillway-degraded")).isNull();
    assertThat(RequestOutcome.of(upstream).degraded()).isEmpty();
  }

  @Test
  void nothingChangesWithoutPressure() {
    String request = chatWithFile("\"temperature\":0.9,\"max_tokens\":1000,\"stop\":\"\\n\\n\",");

    for (Tier tier : Tier.values()) {
      GatewayResponse response = send(config(""), tier, request);
      assertThat(new String(upstream.bodyBytes(), StandardCharsets.UTF_8)).isEqualTo(request);
      assertThat(response.headers().get("x-spillway-degraded")).isNull();
    }
  }

  @Test
  void goldIsDegradedWhenConfiguredTo() {
    GatewayResponse response = send(config("shaping:\n  tiers:\n    gold: { degrade: always }\n"), Tier.GOLD,
        "{\"model\":\"gpt-4o\",\"temperature\":1,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("temperature");
  }

  @Test
  void aRequestAboveItsTiersThresholdIsTrimmedEvenWithoutPressure() {
    String request = chatWithFile("\"temperature\":0.9,");

    GatewayResponse response = send(config("shaping:\n  tiers:\n    silver: { trimAboveTokens: 4000 }\n"), Tier.SILVER,
        request);

    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("trimmed");
    assertThat(upstreamUserMessage()).contains(SampleSources.FAILING_FUNCTION);
    assertThat(upstream.body().get("temperature").asDouble()).isEqualTo(0.9);
  }

  @Test
  void aSmallRequestUnderPressureIsNotTrimmed() {
    GatewayResponse response = send(config("shaping:\n  degrade: always\n"), Tier.BRONZE,
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"print('hi')\"}]}");

    assertThat(response.headers().get("x-spillway-degraded")).isNull();
  }

  @Test
  void perTierKeepLastLinesIsUsed() {
    String request = chatWithFile("");
    send(config("shaping:\n  degrade: always\n  tiers:\n    bronze: { keepLastLines: 10, keepDefinitions: 1 }\n"),
        Tier.BRONZE, request);
    int tight = upstreamUserMessage().split("\n").length;
    send(config("shaping:\n  degrade: always\n"), Tier.BRONZE, request);
    int normal = upstreamUserMessage().split("\n").length;
    assertThat(tight).isLessThan(normal);
  }

  @Test
  void anOpenBreakerTakesNonGoldRequestsAllTheWayToLocal() {
    PressureSignals breakerOpen = new PressureSignals() {
      @Override
      public boolean cloudDegraded() {
        return true;
      }

      @Override
      public boolean poolPastSoftBand(Tier tier) {
        return false;
      }
    };
    answer = request -> {
      // as the router does when it takes the preference to the local backend
      RequestOutcome.of(request).servedBy(BackendKind.LOCAL);
      RequestOutcome.of(request).localByPreference(true);
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    };
    GatewayResponse response = send(config(""), breakerOpen, null, Tier.SILVER, Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"temperature\":0.2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

    assertThat(upstream.attribute(RequestAttributes.PREFER_LOCAL)).isTrue();
    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("local");

    send(config(""), breakerOpen, null, Tier.GOLD, Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertThat(upstream.attribute(RequestAttributes.PREFER_LOCAL)).isNull();
  }

  @Test
  void theLocalStepIsNotReportedWhenTheRouterSentTheRequestToTheCloudAnyway() {
    PressureSignals halfOpen = new PressureSignals() {
      @Override
      public boolean cloudDegraded() {
        return true;
      }

      @Override
      public boolean poolPastSoftBand(Tier tier) {
        return false;
      }
    };
    answer = request -> {
      RequestOutcome.of(request).servedBy(BackendKind.CLOUD); // the breaker made it the half-open probe
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    };

    GatewayResponse response = send(config(""), halfOpen, null, Tier.BRONZE, Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

    assertThat(upstream.attribute(RequestAttributes.PREFER_LOCAL)).isTrue();
    assertThat(response.headers().get("x-spillway-degraded")).isNull();
    assertThat(RequestOutcome.of(upstream).degraded()).isEmpty();
  }

  @Test
  void aPoolPastItsSoftBandSendsShortSingleLineCompletionsToASmallerModel() {
    PressureSignals softBand = new PressureSignals() {
      @Override
      public boolean cloudDegraded() {
        return false;
      }

      @Override
      public boolean poolPastSoftBand(Tier tier) {
        return tier == Tier.BRONZE;
      }
    };
    GatewayResponse response = send(config(""), softBand, null, Tier.BRONZE, Route.COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"prompt\":\"def add(a, b):\\n    return \",\"max_tokens\":32,\"stop\":[\"\\n\"]}");

    assertThat(upstream.body().get("model").asText()).isEqualTo("gpt-4o-mini");
    assertThat(upstream.attribute(RequestAttributes.MODEL_REWRITTEN_FROM)).isEqualTo("gpt-4o");
    assertThat(upstream.attribute(RequestAttributes.PREFER_LOCAL)).isNull();
    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("max_tokens,model");

    send(config(""), softBand, null, Tier.SILVER, Route.COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"prompt\":\"x = \",\"max_tokens\":32}");
    assertThat(upstream.body().get("model").asText()).as("silver's pool is fine").isEqualTo("gpt-4o");
  }

  @Test
  void theModelTableIsConfigurable() {
    ShapingConfig config = config("""
        shaping:
          degrade: always
          models:
            - { from: "gpt-4.1*", to: gpt-4.1-nano, when: short-prompt }
        """);
    send(config, PressureSignals.NONE, null, Tier.BRONZE, Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4.1-2025-04-14\",\"messages\":[{\"role\":\"user\",\"content\":\"Name three colours.\"}]}");
    assertThat(upstream.body().get("model").asText()).isEqualTo("gpt-4.1-nano");

    send(config, PressureSignals.NONE, null, Tier.BRONZE, Route.CHAT_COMPLETIONS, chatWithFile("")
        .replace("\"gpt-4o\"", "\"gpt-4.1\""));
    assertThat(upstream.body().get("model").asText()).as("a long prompt is no short-prompt").isEqualTo("gpt-4.1");
  }

  @Test
  void theRiskIndexDegradesSilverAndBronzeButNotGold() {
    RiskIndex risk = new RiskIndex(ShapingConfig.RiskConfig.DEFAULTS, clock);
    answer = request -> GatewayResponse.json(503, "{\"error\":{\"message\":\"Selected model is at capacity.\"}}"
        .getBytes(StandardCharsets.UTF_8));
    String request = "{\"model\":\"gpt-4o\",\"temperature\":1,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    for (int i = 0; i < 100; i++) {
      send(config(""), PressureSignals.NONE, risk, Tier.GOLD, Route.CHAT_COMPLETIONS, request);
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(risk.active()).isTrue();

    assertThat(send(config(""), PressureSignals.NONE, risk, Tier.SILVER, Route.CHAT_COMPLETIONS, request).headers()
        .get("x-spillway-degraded")).isEqualTo("temperature");
    assertThat(send(config(""), PressureSignals.NONE, risk, Tier.GOLD, Route.CHAT_COMPLETIONS, request).headers()
        .get("x-spillway-degraded")).isNull();
  }

  @Test
  void upstreamLatencyAndFailuresFeedTheRiskIndexButTheGatewaysOwnRefusalsDoNot() {
    RiskIndex risk = new RiskIndex(ShapingConfig.RiskConfig.DEFAULTS, clock);
    String request = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    answer = r -> {
      clock.advance(Duration.ofMillis(1200));
      return GatewayResponse.json(429, "{}".getBytes(StandardCharsets.UTF_8));
    };
    send(config(""), PressureSignals.NONE, risk, Tier.SILVER, Route.CHAT_COMPLETIONS, request);
    answer = r -> {
      throw ErrorKind.RATE_LIMITED.exception("slow down").withRetryAfter(Duration.ofSeconds(1));
    };
    assertThatThrownBy(() -> send(config(""), PressureSignals.NONE, risk, Tier.SILVER, Route.CHAT_COMPLETIONS, request))
        .isInstanceOf(GatewayException.class);

    JsonNode snapshot = risk.snapshot();
    assertThat(snapshot.at("/requests/recent").asLong()).isEqualTo(1);
    assertThat(snapshot.at("/requests/recentErrors").asLong()).isEqualTo(1);
    assertThat(snapshot.at("/requests/meanLatencyMs").asLong()).isZero();
    assertThat(snapshot.at("/requests/lastWindow").asLong()).isEqualTo(2);
  }

  @Test
  void riskyStopsAreRewrittenUnderPressureAndTheAnswerIsCut() {
    answer = request -> GatewayResponse.json(200, """
        {"choices":[{"index":0,"message":{"role":"assistant","content":"x = 1\\n\\ny = 2"},"finish_reason":"length"}]}
        """.getBytes(StandardCharsets.UTF_8));

    GatewayResponse response = send(config("shaping:\n  degrade: always\n"), Tier.SILVER,
        "{\"model\":\"gpt-4o\",\"stop\":\"\\n\\n\",\"messages\":[{\"role\":\"user\",\"content\":\"code\"}]}");

    assertThat(upstream.body().has("stop")).isFalse();
    assertThat(upstream.body().get("max_tokens").asInt()).isEqualTo(512);
    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("stop");
    assertThat(new String(response.body(), StandardCharsets.UTF_8)).contains("\"content\":\"x = 1\"", "\"stop\"");
  }

  @Test
  void lowSignalRequestsAreMarkedWithOrWithoutPressure() {
    GatewayResponse response = send(config("shaping:\n  degrade: never\n"), Tier.GOLD,
        "{\"model\":\"gpt-4o\",\"temperature\":1.5,\"max_tokens\":4000,\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}");

    assertThat(upstream.attribute(RequestAttributes.LOW_SIGNAL)).isTrue();
    assertThat(response.headers().get("x-spillway-signal")).isEqualTo("low");
    assertThat(meters.get("spillway.shaping.low_signal").tags("reason", "hot-sampling", "tier", "gold").counter().count())
        .isEqualTo(1);

    GatewayResponse normal = send(config(""), Tier.GOLD,
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"go\"}]}");
    assertThat(upstream.attribute(RequestAttributes.LOW_SIGNAL)).isNull();
    assertThat(normal.headers().get("x-spillway-signal")).isNull();
  }

  @Test
  void aTiersStepsLimitTheLadder() {
    GatewayResponse response = send(config("shaping:\n  degrade: always\n  tiers:\n    bronze: { steps: [trim] }\n"),
        Tier.BRONZE, chatWithFile("\"temperature\":0.9,"));

    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("trimmed");
  }

  @Test
  void completionsPromptsAndResponsesInputsAreTrimmedToo() {
    String file = SampleSources.pythonModuleWithTraceback(800);
    send(config("shaping:\n  degrade: always\n"), PressureSignals.NONE, null, Tier.BRONZE, Route.COMPLETIONS,
        "{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":" + quote(file) + "}");
    assertThat(upstream.body().get("prompt").asText()).contains(SampleSources.FAILING_FUNCTION).hasSizeLessThan(file.length() / 3);

    send(config("shaping:\n  degrade: always\n"), PressureSignals.NONE, null, Tier.BRONZE, Route.RESPONSES,
        "{\"model\":\"gpt-4.1\",\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":"
            + quote("```python\n" + file + "```") + "}]},{\"type\":\"function_call_output\",\"call_id\":\"c1\","
            + "\"output\":" + quote(file) + "}]}");
    assertThat(upstream.body().at("/input/0/content/0/text").asText()).hasSizeLessThan(file.length() / 3);
    assertThat(upstream.body().at("/input/1/output").asText()).hasSizeLessThan(file.length() / 3);
  }

  @Test
  void theStagesRunInLadderOrder() {
    List<Interceptor> stages = ShapingStages.create(config(""), PressureSignals.NONE,
        new RiskIndex(ShapingConfig.RiskConfig.DEFAULTS, clock), clock, new ShapingMetrics(meters, Runnable::run));

    assertThat(stages).extracting(Object::toString).containsExactly("SignalInterceptor", "LadderInterceptor", "TrimInterceptor", "DowngradeInterceptor", "StopRewriteInterceptor",
        "ModelStepInterceptor", "LocalStepInterceptor", "RiskInterceptor");
  }

  @Test
  void theModelStepJudgesTheOutputLimitTheClientAskedForNotTheDowngradedOne() {
    GatewayResponse response = send(config("shaping:\n  degrade: always\n"), PressureSignals.NONE, null, Tier.BRONZE,
        Route.COMPLETIONS, "{\"model\":\"gpt-4o\",\"prompt\":\"x = \",\"max_tokens\":80}");

    assertThat(upstream.body().get("max_tokens").asInt()).isEqualTo(56);
    assertThat(upstream.body().get("model").asText()).isEqualTo("gpt-4o");
    assertThat(response.headers().get("x-spillway-degraded")).isEqualTo("max_tokens");
  }

  @Test
  void everyStepAndTheSignalAreReportedTogetherInLadderOrder() {
    PressureSignals breakerOpen = new PressureSignals() {
      @Override
      public boolean cloudDegraded() {
        return true;
      }

      @Override
      public boolean poolPastSoftBand(Tier tier) {
        return false;
      }
    };
    answer = request -> {
      // as the router does when it takes the preference to the local backend
      RequestOutcome.of(request).servedBy(BackendKind.LOCAL);
      RequestOutcome.of(request).localByPreference(true);
      return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
    };
    String file = SampleSources.pythonModuleWithTraceback(800);

    GatewayResponse response = send(config(""), breakerOpen, null, Tier.BRONZE, Route.COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"prompt\":" + quote(file) + ",\"temperature\":1.5,\"max_tokens\":4000,"
            + "\"stop\":[\"\\n\\n\",\"\\n\"]}");

    assertThat(response.headers().get("x-spillway-degraded"))
        .isEqualTo("trimmed,temperature,max_tokens,stop,model,local");
    assertThat(response.headers().get("x-spillway-signal")).isEqualTo("low");
    assertThat(upstream.body().get("model").asText()).isEqualTo("gpt-4o-mini");
    assertThat(upstream.body().get("stop")).hasSize(1);
    assertThat(upstream.body().get("max_tokens").asInt()).isEqualTo(512);
  }
}
