package io.spillway.app.deploy;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A real Prometheus server, loaded with the shipped rules (deploy/prometheus/spillway-alerts.yaml),
 * scrapes a real gateway once a second through a capacity storm and the way back: the storm alert
 * fires when the breaker opens and clears once the probe after {@code failover.localFor} has brought
 * the cloud back. The gateway's clock is fake, so {@code localFor} passes at once; Prometheus keeps
 * its own time, with one-second scrapes and evaluations.
 */
class PrometheusStormAlertTest {
  static final String STORM = "SpillwayCapacityStorm";
  static final List<String> KEYS = List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY);

  @Test
  void theStormAlertFiresWhenTheBreakerOpensAndClearsAfterTheWayBack() throws Exception {
    Path binary = ExternalTool.require("prometheus", "prometheus");
    try (GatewayHarness h = GatewayHarness.start("local:\n  kind: openai\n");
        PrometheusServer prometheus = PrometheusServer.start(binary, MonitoringFilesTest.RULES, h.gateway().port())) {
      h.ollama.stubFor(post("/v1/chat/completions").atPriority(1)
          .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
          .willReturn(OpenAiStubs.chatStream(true, "Served ", "locally")));
      h.ollama.stubFor(post("/v1/chat/completions").atPriority(5).willReturn(OpenAiStubs.chatCompletion("Served locally")));
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("Served by the cloud")));
      for (String key : KEYS) {
        assertThat(backendOf(h, key, false)).isEqualTo("cloud");
      }
      await("Prometheus scrapes the gateway").atMost(Duration.ofSeconds(30))
          .until(() -> prometheus.query("spillway_breaker_state").size() == 1);
      assertThat(prometheus.alerts(STORM)).as("no storm yet").isEmpty();

      h.cloud.resetAll();
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      for (String key : KEYS) {
        assertThat(backendOf(h, key, true)).as("a capacity answer is served locally").isEqualTo("local");
      }
      await("the storm alert fires").atMost(Duration.ofSeconds(30))
          .until(() -> prometheus.alerts(STORM).contains("firing"));
      for (String key : KEYS) {
        assertThat(backendOf(h, key, false)).as("the breaker is open").isEqualTo("local");
      }

      h.clock.advance(Duration.ofMinutes(5));
      h.cloud.resetAll();
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("Served by the cloud")));
      assertThat(backendOf(h, GatewayHarness.BRONZE_KEY, false)).as("the probe").isEqualTo("cloud");
      await("the storm alert clears").atMost(Duration.ofSeconds(30))
          .until(() -> prometheus.alerts(STORM).isEmpty());
      await("Prometheus reads the breaker closed").atMost(Duration.ofSeconds(30))
          .until(() -> prometheus.query("spillway_breaker_state").stream()
              .anyMatch(sample -> sample.path("value").get(1).asText().equals("0")));
    }
  }

  static String backendOf(GatewayHarness h, String key, boolean stream) {
    HttpResponse<String> answer = h.post("/v1/chat/completions", key, GatewayHarness.chatBody("gpt-4o", "Write a haiku", stream));
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    return answer.headers().firstValue("x-spillway-backend").orElseThrow();
  }
}
