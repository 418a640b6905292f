package io.spillway.app.observe;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MetricsTest {
  GatewayHarness harness;

  @AfterEach
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private PrometheusText scrape() {
    HttpResponse<String> response = harness.get("/metrics", null);
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
        type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
    return new PrometheusText(response.body());
  }

  private HttpResponse<String> chat(String key, String model, boolean stream) {
    return harness.post("/v1/chat/completions", key, GatewayHarness.chatBody(model, "Say hello", stream));
  }

  @Test
  void requestsAreCountedByRouteBackendTierModelAndOutcome() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));

    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).statusCode()).isEqualTo(200);
    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).statusCode()).isEqualTo(200);
    assertThat(chat(GatewayHarness.SILVER_KEY, "gpt-4o-mini", false).statusCode()).isEqualTo(200);

    PrometheusText metrics = scrape();
    assertThat(metrics.sum("spillway_requests_total", "route", "chat", "backend", "cloud", "tier", "gold",
        "model", "gpt-4o", "outcome", "success", "status", "2xx")).isEqualTo(2.0);
    assertThat(metrics.sum("spillway_requests_total", "tier", "silver", "model", "gpt-4o-mini")).isEqualTo(1.0);
    assertThat(metrics.sum("spillway_tokens_total", "tier", "gold", "kind", "prompt")).isEqualTo(24.0);
    assertThat(metrics.sum("spillway_tokens_total", "tier", "gold", "kind", "completion")).isEqualTo(14.0);
  }

  @Test
  void latencyIsAHistogramForPercentilesAndUpstreamTimeIsApartFromGatewayTime() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions")
        .willReturn(OpenAiStubs.chatCompletion("slow").withFixedDelay(300)));

    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).statusCode()).isEqualTo(200);

    PrometheusText metrics = scrape();
    double upstream = metrics.sum("spillway_upstream_duration_seconds_sum", "route", "chat", "backend", "cloud");
    double gateway = metrics.sum("spillway_gateway_duration_seconds_sum", "route", "chat");
    double total = metrics.sum("spillway_request_duration_seconds_sum", "route", "chat");
    assertThat(upstream).isGreaterThanOrEqualTo(0.3);
    assertThat(gateway).isLessThan(upstream);
    assertThat(total).isCloseTo(upstream + gateway, within(0.05));
    assertThat(metrics.sum("spillway_request_duration_seconds_bucket", "route", "chat", "le", "+Inf")).isEqualTo(1.0);
    assertThat(metrics.matching("spillway_request_duration_seconds_bucket", "route", "chat"))
        .as("enough buckets for histogram_quantile to give a useful p50/p95/p99").hasSizeGreaterThan(20);
    assertThat(metrics.sum("spillway_backend_call_duration_seconds_count", "backend", "cloud", "status", "2xx"))
        .isEqualTo(1.0);
  }

  @Test
  void streamsRecordTimeToFirstByte() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "Hel", "lo")));

    HttpResponse<String> response = chat(GatewayHarness.GOLD_KEY, "gpt-4o", true);
    assertThat(response.body()).contains("[DONE]");

    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
      PrometheusText metrics = scrape();
      assertThat(metrics.sum("spillway_stream_first_byte_seconds_count", "route", "chat", "backend", "cloud"))
          .isEqualTo(1.0);
      assertThat(metrics.sum("spillway_request_duration_seconds_count", "route", "chat", "stream", "true"))
          .isEqualTo(1.0);
      assertThat(metrics.sum("spillway_tokens_total", "kind", "completion")).isEqualTo(2.0);
    });
  }

  @Test
  void capacityAnswersAreCountedAndDriveTheCapacityRate() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.overloaded()));
    chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
    chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);
    chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);

    PrometheusText metrics = scrape();
    assertThat(metrics.sum("spillway_capacity_answers_total", "backend", "cloud")).isEqualTo(2.0);
    assertThat(metrics.sum("spillway_upstream_errors_total", "backend", "cloud", "class", "capacity")).isEqualTo(2.0);
    assertThat(metrics.sum("spillway_capacity_rate")).isEqualTo(0.5);

    harness.clock.advance(harness.config().metrics().capacityWindow().plusMinutes(1));
    assertThat(scrape().sum("spillway_capacity_rate")).isEqualTo(0.0);
  }

  @Test
  void rateLimitsAndInsufficientQuotaAreUpstreamErrorsButNotCapacity() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.rateLimited()));
    chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.insufficientQuota()));
    chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);

    PrometheusText metrics = scrape();
    assertThat(metrics.sum("spillway_capacity_answers_total")).isZero();
    assertThat(metrics.sum("spillway_upstream_errors_total", "class", "http_429")).isEqualTo(2.0);
    assertThat(metrics.sum("spillway_capacity_rate")).isZero();
    assertThat(metrics.sum("spillway_requests_total", "outcome", "rate_limited", "status", "4xx")).isEqualTo(2.0);
  }

  @Test
  void transportFailuresAreCountedByClass() {
    harness = GatewayHarness.start("cloud:\n  baseUrl: http://127.0.0.1:1/v1\n  connectTimeout: 1s");

    HttpResponse<String> response = chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);

    assertThat(response.statusCode()).isEqualTo(502);
    assertThat(scrape().sum("spillway_upstream_errors_total", "backend", "cloud", "class", "connect_failed"))
        .isEqualTo(1.0);
  }

  @Test
  void tagsStayBoundedAndNeverCarryKeysOrRawPaths() {
    harness = GatewayHarness.start("metrics:\n  maxModelTags: 2");
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));

    for (String model : new String[] {"model-a", "model-b", "model-c", "model-d", "bad model {}"}) {
      chat(GatewayHarness.GOLD_KEY, model, false);
    }
    chat("sk-not-a-real-key-123", "attacker-model", false);
    harness.post("/v1/chat/completions/../../secret-path", GatewayHarness.GOLD_KEY, "{}");

    String text = harness.get("/metrics", null).body();
    PrometheusText metrics = new PrometheusText(text);
    Set<String> models = metrics.matching("spillway_requests_total").stream()
        .map(s -> s.labels().get("model")).collect(Collectors.toSet());
    assertThat(models).containsExactlyInAnyOrder("model-a", "model-b", "other", "none");
    assertThat(metrics.sum("spillway_requests_total", "model", "other")).isEqualTo(3.0);
    assertThat(metrics.sum("spillway_requests_total", "tier", "none", "status", "4xx")).isEqualTo(1.0);
    assertThat(text).doesNotContain("sk-not-a-real-key-123", GatewayHarness.GOLD_KEY, "secret-path", "attacker-model",
        "release", "sandbox");
  }

  @Test
  void junkModelNamesCannotPushAnsweredOrConfiguredModelsIntoOther() {
    harness = GatewayHarness.start("local:\n  enabled: false\nmetrics:\n  maxModelTags: 30");
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.invalidModel()));
    harness.cloud.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(matchingJsonPath("$.model", equalTo("gpt-4o")))
        .willReturn(OpenAiStubs.chatCompletion("hi")));

    for (int i = 0; i < 35; i++) {
      assertThat(chat(GatewayHarness.BRONZE_KEY, "junk-model-" + i, false).statusCode()).isEqualTo(404);
    }
    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).statusCode()).isEqualTo(200);
    chat(GatewayHarness.GOLD_KEY, "gpt-4.1-mini", false);

    PrometheusText metrics = scrape();
    Set<String> models = metrics.matching("spillway_requests_total").stream()
        .map(sample -> sample.labels().get("model")).collect(Collectors.toSet());
    assertThat(models).as("an answered model and a configured one (shaping's model rules) keep their names")
        .containsExactlyInAnyOrder("gpt-4o", "gpt-4.1-mini", "other");
    assertThat(metrics.sum("spillway_requests_total", "model", "other")).isEqualTo(35.0);
    assertThat(metrics.sum("spillway_requests_total", "model", "gpt-4o", "outcome", "success")).isEqualTo(1.0);
  }

  @Test
  void metricsEndpointIsOffWhenDisabled() {
    harness = GatewayHarness.start("metrics:\n  enabled: false");

    assertThat(harness.get("/metrics", null).statusCode()).isEqualTo(404);
    assertThat(harness.gateway().meters()).isNotNull();
  }
}
