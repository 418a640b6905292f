package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.routing.capacity.Outcome;
import io.spillway.routing.capacity.Verdict;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The router's meters, bound from outside as its listener: names, tags and values of /metrics. */
class RouterMetricsTest {
  final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  final RouterMetrics metrics = new RouterMetrics(meters);
  final Verdict capacity = new Verdict(Outcome.CAPACITY, "model_at_capacity", Duration.ofSeconds(20));

  @Test
  void unavailableAnswersAreShownFromTheStartAtZero() {
    assertThat(meters.scrape()).contains("spillway_router_unavailable_total 0.0");

    metrics.onUnavailable();

    assertThat(meters.scrape()).contains("spillway_router_unavailable_total 1.0");
  }

  @Test
  void anAttemptIsTimedByBackendAndOutcomeWithTheDurationTheRouterMeasured() {
    metrics.onAttempt(BackendKind.CLOUD, capacity, Duration.ofMillis(250).toNanos());

    PrometheusText text = new PrometheusText(meters.scrape());
    assertThat(text.sum("spillway_router_attempt_duration_seconds_count", "backend", "cloud", "outcome", "capacity"))
        .isEqualTo(1);
    assertThat(text.sum("spillway_router_attempt_duration_seconds_sum", "backend", "cloud", "outcome", "capacity"))
        .isEqualTo(0.25);
  }

  @Test
  void capacityAnswersFailoversAndFallbacksAreCountedWithTheirTags() {
    metrics.onCapacityAnswer("primary", capacity);
    metrics.onFailover("primary", capacity);
    metrics.onFallback("local_not_ready");

    assertThat(meters.scrape())
        .contains("spillway_breaker_capacity_answers_total{route=\"primary\",rule=\"model_at_capacity\"} 1.0")
        .contains("spillway_failovers_total{reason=\"capacity\",route=\"primary\"} 1.0")
        .contains("spillway_router_fallbacks_total{cause=\"local_not_ready\"} 1.0");
  }
}
