package io.spillway.shaping.risk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.ShapingConfig;
import io.spillway.core.testing.FakeClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Values are compared within a hundredth: the windows interpolate their edge buckets. */
class RiskIndexTest {
  private static final double RESOLUTION = 0.01;
  private final FakeClock clock = FakeClock.at("2026-11-10T08:00:00Z");
  private final ShapingConfig.RiskConfig config = ShapingConfig.RiskConfig.DEFAULTS;
  private final RiskIndex risk = new RiskIndex(config, clock);

  /** {@code count} requests spread evenly over {@code over}, each with this latency and outcome. */
  private void traffic(int count, Duration over, long latencyMillis, double errorShare) {
    long step = over.toMillis() / count;
    for (int i = 0; i < count; i++) {
      // Errors spread evenly: one whenever the running share passes a whole number.
      boolean error = Math.floor((i + 1) * errorShare) > Math.floor(i * errorShare);
      risk.record(latencyMillis, error);
      clock.advance(Duration.ofMillis(step));
    }
  }

  @Test
  void steadyHealthyTrafficScoresZero() {
    traffic(600, Duration.ofHours(1), 400, 0);
    traffic(600, Duration.ofHours(1), 400, 0);

    assertThat(risk.value()).isEqualTo(0.0);
    assertThat(risk.active()).isFalse();
  }

  @Test
  void doubledRequestsCountTheGrowthWeightAlone() {
    traffic(300, Duration.ofHours(1), 400, 0);
    traffic(600, Duration.ofHours(1), 400, 0);

    assertThat(risk.value()).isCloseTo(config.weights().growth(), within(RESOLUTION));
    assertThat(risk.active()).isFalse();
  }

  @Test
  void growthIsHalfWhenTrafficRisesByHalf() {
    traffic(400, Duration.ofHours(1), 400, 0);
    traffic(600, Duration.ofHours(1), 400, 0);

    assertThat(risk.value()).isCloseTo(0.5 * config.weights().growth(), within(RESOLUTION));
  }

  @Test
  void latencyAtTwiceTheBaselineCountsTheLatencyWeight() {
    traffic(600, Duration.ofHours(1), 400, 0);
    traffic(600, Duration.ofHours(1), 2 * config.latencyBaseline().toMillis(), 0);

    assertThat(risk.value()).isCloseTo(config.weights().latency(), within(RESOLUTION));
  }

  @Test
  void errorRateIsWeightedByTheErrorWeight() {
    traffic(600, Duration.ofHours(1), 400, 0);
    traffic(600, Duration.ofHours(1), 400, 0.5);

    assertThat(risk.value()).isCloseTo(0.5 * config.weights().errors(), within(RESOLUTION));
  }

  @Test
  void surgeWithSlowAnswersAndErrorsGoesAboveTheThresholdAndHoldsForFifteenMinutes() {
    traffic(300, Duration.ofHours(1), 500, 0);
    traffic(600, Duration.ofHours(1), 1600, 0.4);

    assertThat(risk.value()).isGreaterThan(config.threshold());
    assertThat(risk.active()).isTrue();

    // The surge is over: the recent window fills with fast, successful answers.
    traffic(100, Duration.ofMinutes(5), 300, 0);
    assertThat(risk.value()).isLessThan(config.threshold());
    assertThat(risk.active()).as("held").isTrue();

    clock.advance(config.hold());
    assertThat(risk.active()).isFalse();
    assertThat(risk.snapshot().get("holdUntil").isNull()).isTrue();
  }

  @Test
  void fewRequestsSayNothingAboutLatencyOrErrors() {
    for (int i = 0; i < config.minSamples() - 1; i++) {
      risk.record(10_000, true);
    }
    assertThat(risk.value()).isLessThanOrEqualTo(config.weights().growth());
    assertThat(risk.snapshot().at("/components/errors").asDouble()).isEqualTo(0.0);
  }

  @Test
  void oldErrorsLeaveTheWindow() {
    traffic(200, Duration.ofMinutes(5), 400, 1.0);
    assertThat(risk.snapshot().at("/components/errors").asDouble()).isEqualTo(1.0);

    clock.advance(config.window().plusMinutes(1));
    traffic(50, Duration.ofMinutes(1), 400, 0);

    assertThat(risk.snapshot().at("/components/errors").asDouble()).isEqualTo(0.0);
  }

  @Test
  void requestsRefusedByTheGatewayCountAsDemandOnly() {
    traffic(300, Duration.ofMinutes(10), 400, 0);
    ObjectNode before = risk.snapshot();

    for (int i = 0; i < 100; i++) {
      risk.recordRefused();
    }

    ObjectNode after = risk.snapshot();
    assertThat(after.at("/requests/lastWindow").asLong()).isEqualTo(before.at("/requests/lastWindow").asLong() + 100);
    assertThat(after.at("/requests/recent").asLong()).isEqualTo(before.at("/requests/recent").asLong());
    assertThat(after.at("/components/errors").asDouble()).isEqualTo(0.0);
  }

  @Test
  void gaugeReportsTheIndex() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    risk.bindTo(registry);
    traffic(300, Duration.ofHours(1), 400, 0);
    traffic(600, Duration.ofHours(1), 400, 0);

    assertThat(registry.get("spillway.risk.index").gauge().value()).isCloseTo(risk.value(), within(1e-9));
  }

  @Test
  void customWeightsAndThresholdAreUsed() {
    ShapingConfig.RiskConfig growthOnly = new ShapingConfig.RiskConfig(null, 0.5, Duration.ofMinutes(1),
        new ShapingConfig.WeightsConfig(1.0, 0.0, 0.0), null, Duration.ofMinutes(10), null, 10, null, null);
    RiskIndex index = new RiskIndex(growthOnly, clock);
    for (int i = 0; i < 20; i++) {
      index.record(100, false);
      clock.advance(Duration.ofSeconds(30));
    }
    for (int i = 0; i < 40; i++) {
      index.record(100, false);
      clock.advance(Duration.ofSeconds(15));
    }
    assertThat(index.value()).isCloseTo(1.0, within(0.05));
    assertThat(index.active()).isTrue();
    clock.advance(Duration.ofMinutes(25));
    assertThat(index.active()).isFalse();
  }

  @Test
  void disabledIndexIsNeverActive() {
    RiskIndex off = new RiskIndex(new ShapingConfig.RiskConfig(false, null, null, null, null, null, null, null, null,
        null), clock);
    for (int i = 0; i < 1000; i++) {
      off.record(100_000, true);
    }
    assertThat(off.active()).isFalse();
  }
}
