package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.shaping.risk.RiskIndex;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RiskInterceptorTest {
  private final OneStage run = new OneStage();
  private final RiskIndex risk = new RiskIndex(ShapingConfig.RiskConfig.DEFAULTS, run.clock);
  private final RiskInterceptor stage = new RiskInterceptor(risk, run.clock);

  private void send(Tier tier, Route route) {
    run.send(stage, tier, ShapingPolicy.Plan.none(tier), route, OneStage.chat("", "hi"));
  }

  @Test
  void theUpstreamsLatencyAndCapacityAnswersAreRecorded() {
    run.answer = request -> {
      run.clock.advance(Duration.ofMillis(1200));
      return GatewayResponse.json(429, "{}".getBytes(StandardCharsets.UTF_8));
    };

    send(Tier.SILVER, Route.CHAT_COMPLETIONS);

    JsonNode snapshot = risk.snapshot();
    assertThat(snapshot.at("/requests/recent").asLong()).isEqualTo(1);
    assertThat(snapshot.at("/requests/recentErrors").asLong()).isEqualTo(1);
    assertThat(snapshot.at("/requests/lastWindow").asLong()).isEqualTo(1);
  }

  @Test
  void aFailureThrownFromBeyondCountsAsAnError() {
    run.answer = request -> {
      throw ErrorKind.BAD_GATEWAY.exception("down");
    };

    assertThatThrownBy(() -> send(Tier.GOLD, Route.CHAT_COMPLETIONS)).isInstanceOf(GatewayException.class);

    assertThat(risk.snapshot().at("/requests/recentErrors").asLong()).isEqualTo(1);
  }

  @Test
  void theGatewaysOwnRefusalsCountTowardGrowthOnly() {
    run.answer = request -> {
      throw ErrorKind.RATE_LIMITED.exception("slow down").withRetryAfter(Duration.ofSeconds(1));
    };

    assertThatThrownBy(() -> send(Tier.BRONZE, Route.CHAT_COMPLETIONS)).isInstanceOf(GatewayException.class);

    JsonNode snapshot = risk.snapshot();
    assertThat(snapshot.at("/requests/recent").asLong()).isZero();
    assertThat(snapshot.at("/requests/lastWindow").asLong()).isEqualTo(1);
  }

  @Test
  void embeddingsAreNotObserved() {
    send(Tier.SILVER, Route.EMBEDDINGS);

    assertThat(risk.snapshot().at("/requests/lastWindow").asLong()).isZero();
  }
}
