package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.testing.FakeClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RequestSeriesTest {
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:30Z");
  final RequestSeries series = new RequestSeries(clock, Duration.ofHours(1), Duration.ofMinutes(5));

  @Test
  void countsLandInTheMinuteTheyHappenedIn() {
    series.recordRequest();
    clock.advance(Duration.ofMinutes(1));
    series.recordRequest();
    series.recordRequest();

    JsonNode points = series.toJson().get("points");

    assertThat(points).hasSize(60);
    assertThat(points.get(59).get("t").asText()).isEqualTo("2026-11-10T10:01:00Z");
    assertThat(points.get(59).get("requests").asInt()).isEqualTo(2);
    assertThat(points.get(58).get("requests").asInt()).isEqualTo(1);
    assertThat(points.get(0).get("requests").asInt()).isZero();
    assertThat(series.totalRequests()).isEqualTo(3);
  }

  @Test
  void minutesOlderThanTheWindowAreForgottenEvenWhenTheirSlotIsReused() {
    series.recordRequest();
    clock.advance(Duration.ofMinutes(60));

    assertThat(series.toJson().get("points").findValues("requests")).allSatisfy(n -> assertThat(n.asInt()).isZero());

    series.recordRequest();
    assertThat(series.toJson().get("points").get(59).get("requests").asInt()).isEqualTo(1);
    assertThat(series.totalRequests()).isEqualTo(2);
  }

  @Test
  void capacityRateIsCapacityAnswersOverCloudAnswersInTheWindow() {
    series.recordCloudAnswer(true);
    series.recordCloudAnswer(false);
    clock.advance(Duration.ofMinutes(3));
    series.recordCloudAnswer(true);
    series.recordCloudAnswer(true);

    assertThat(series.capacityRate(Duration.ofMinutes(5))).isEqualTo(0.75);
    assertThat(series.capacityRate(Duration.ofMinutes(1))).isEqualTo(1.0);
    clock.advance(Duration.ofMinutes(3));
    assertThat(series.capacityRate(Duration.ofMinutes(5))).isEqualTo(1.0);
    clock.advance(Duration.ofMinutes(10));
    assertThat(series.capacityRate(Duration.ofMinutes(5))).isZero();
  }

  @Test
  void eachPointCarriesItsOwnCapacityRate() {
    series.recordCloudAnswer(true);
    series.recordCloudAnswer(false);
    series.recordCloudAnswer(false);
    series.recordCloudAnswer(false);

    JsonNode last = series.toJson().get("points").get(59);
    assertThat(last.get("cloudAnswers").asInt()).isEqualTo(4);
    assertThat(last.get("capacityAnswers").asInt()).isEqualTo(1);
    assertThat(last.get("capacityRate").asDouble()).isEqualTo(0.25);
  }

  @Test
  void eachMinuteSplitsItsRequestsByWhoAnsweredThem() {
    series.recordRequest(BackendKind.CLOUD, -1);
    series.recordRequest(BackendKind.LOCAL, -1);
    series.recordRequest(BackendKind.LOCAL, -1);
    series.recordRequest(BackendKind.CACHE, -1);
    series.recordRequest();

    JsonNode last = series.toJson().get("points").get(59);
    assertThat(last.get("requests").asInt()).isEqualTo(5);
    assertThat(last.get("answeredBy").toString())
        .isEqualTo("{\"cloud\":1,\"local\":2,\"cache\":1,\"none\":1}");
  }

  @Test
  void latencyP50AndP99PerBackendAreNeverBelowTheTruthAndAtMostABucketAbove() {
    for (int i = 1; i <= 100; i++) {
      series.recordRequest(BackendKind.CLOUD, Duration.ofMillis(10L * i).toNanos());
    }
    series.recordRequest(BackendKind.LOCAL, Duration.ofMillis(2_000).toNanos());

    JsonNode latency = series.toJson().get("latencyMs");
    double p50 = latency.get("cloud").get("p50").asDouble();
    double p99 = latency.get("cloud").get("p99").asDouble();
    assertThat(p50).isBetween(500.0, 500 * 1.19);
    assertThat(p99).isBetween(990.0, 990 * 1.19);
    assertThat(latency.get("cloud").get("count").asInt()).isEqualTo(100);
    assertThat(latency.get("local").get("p50").asDouble()).isBetween(2000.0, 2000 * 1.19);
    assertThat(series.toJson().get("points").get(59).get("latencyMs").get("local").get("count").asInt()).isEqualTo(1);
  }

  @Test
  void theLatencyFiguresCoverOnlyTheRecentWindowAndAreNullWithoutAnswers() {
    series.recordRequest(BackendKind.CLOUD, Duration.ofSeconds(30).toNanos());
    clock.advance(Duration.ofMinutes(6));
    series.recordRequest(BackendKind.CLOUD, Duration.ofMillis(100).toNanos());

    JsonNode json = series.toJson();
    assertThat(json.get("latencyWindow").asText()).isEqualTo("5m");
    assertThat(json.get("latencyMs").get("cloud").get("count").asInt()).isEqualTo(1);
    assertThat(json.get("latencyMs").get("cloud").get("p99").asDouble()).isLessThan(200);
    assertThat(json.get("latencyMs").get("local").get("p50").isNull()).isTrue();
    assertThat(json.get("latencyMs").get("local").get("count").asInt()).isZero();
  }

  @Test
  void sinceIsTheMinuteTheSeriesStartedSoTheDashboardCanShowOnlyTheTimeItWasUp() {
    clock.advance(Duration.ofMinutes(2));

    JsonNode json = series.toJson();
    assertThat(json.get("since").asText()).isEqualTo("2026-11-10T10:00:00Z");
    assertThat(json.get("points").get(59).get("t").asText()).isEqualTo("2026-11-10T10:02:00Z");
  }
}
