package io.spillway.app.observe;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.testing.FakeClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class RequestSeriesTest {
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:30Z");
  final RequestSeries series = new RequestSeries(clock, Duration.ofHours(1));

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
}
