package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.config.FailoverConfig;
import io.spillway.routing.breaker.BreakerSettings;
import io.spillway.core.testing.FakeClock;
import io.spillway.routing.breaker.Breaker;
import io.spillway.routing.breaker.Breaker.OverrideMode;
import io.spillway.routing.breaker.ReplicaBreaker;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The breakers' meters, bound from outside: names, tags and values as /metrics has always shown them. */
class BreakerMetricsTest {
  static final Duration LOCAL_FOR = Duration.ofMinutes(5);

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final BreakerSettings config =
      BreakerSettings.from(new FailoverConfig(3, LOCAL_FOR, Duration.ofMinutes(30), true, 4, null, null, null));
  final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  final Breaker breaker = new ReplicaBreaker("primary", config, clock);

  BreakerMetricsTest() {
    BreakerMetrics.bind(breaker, meters);
  }

  PrometheusText scrape() {
    return new PrometheusText(meters.scrape());
  }

  void capacityAnswer() {
    breaker.record(breaker.acquire(), new Verdict(Outcome.CAPACITY, "model_at_capacity", null));
  }

  @Test
  void theStateGaugeFollowsWhatRoutingDoes() {
    assertThat(scrape().sum("spillway_breaker_state", "route", "primary")).isEqualTo(0);
    capacityAnswer();
    capacityAnswer();
    capacityAnswer();
    assertThat(scrape().sum("spillway_breaker_state", "route", "primary")).as("open").isEqualTo(2);
    clock.advance(LOCAL_FOR);
    assertThat(scrape().sum("spillway_breaker_state", "route", "primary")).as("half-open").isEqualTo(1);
    breaker.override(OverrideMode.OPEN);
    assertThat(scrape().sum("spillway_breaker_state", "route", "primary")).as("forced open").isEqualTo(2);
    breaker.override(OverrideMode.CLOSED);
    assertThat(scrape().sum("spillway_breaker_state", "route", "primary")).as("forced closed").isEqualTo(0);
  }

  @Test
  void theOverrideGaugeTellsAnOperatorsHoldFromTheBreakersOwnDecision() {
    capacityAnswer();
    capacityAnswer();
    capacityAnswer();
    assertThat(scrape().sum("spillway_breaker_override", "route", "primary")).as("opened by capacity answers").isEqualTo(0);
    breaker.override(OverrideMode.OPEN);
    assertThat(scrape().sum("spillway_breaker_override", "route", "primary")).as("forced open").isEqualTo(1);
    breaker.override(OverrideMode.CLOSED);
    assertThat(scrape().sum("spillway_breaker_override", "route", "primary")).as("forced closed").isEqualTo(2);
    breaker.override(OverrideMode.AUTO);
    assertThat(scrape().sum("spillway_breaker_override", "route", "primary")).as("auto again").isEqualTo(0);
  }

  @Test
  void theStreakGaugeCountsCapacityAnswersWhileClosed() {
    capacityAnswer();
    capacityAnswer();

    assertThat(scrape().sum("spillway_breaker_capacity_streak", "route", "primary")).isEqualTo(2);
  }

  @Test
  void aReplicasOwnBreakerShowsTheLocalMode() {
    assertThat(meters.scrape()).contains("spillway_breaker_mode{mode=\"local\"} 1.0");
  }

  @Test
  void transitionsAreCountedByFromToAndRoute() {
    capacityAnswer();
    capacityAnswer();
    capacityAnswer();
    clock.advance(LOCAL_FOR);
    breaker.record(breaker.acquire(), new Verdict(Outcome.SUCCESS, "success", null));

    assertThat(meters.scrape())
        .contains("spillway_breaker_transitions_total{from=\"closed\",route=\"primary\",to=\"open\"} 1.0")
        .contains("spillway_breaker_transitions_total{from=\"open\",route=\"primary\",to=\"half_open\"} 1.0")
        .contains("spillway_breaker_transitions_total{from=\"half_open\",route=\"primary\",to=\"closed\"} 1.0");
  }
}
