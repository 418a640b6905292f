package io.spillway.app.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.cache.ResponseCache;
import io.spillway.config.CacheConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The cache's metrics carry the names docs/cache.md promises once rendered for Prometheus. */
class CacheMetricNamesTest {
  @Test
  void cacheMetricsHaveTheirDocumentedPrometheusNames() throws Exception {
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    ResponseCache cache = ResponseCache.builder(CacheConfig.DEFAULTS)
        .clock(FakeClock.at("2026-11-10T10:00:00Z")).meters(prometheus).build();
    byte[] answer = """
        {"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",
         "content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}"""
        .getBytes(StandardCharsets.UTF_8);
    Pipeline pipeline = new Pipeline(List.of(cache.interceptor()), Terminal.blocking(request -> GatewayResponse.json(200, answer)));
    byte[] body = "{\"model\":\"gpt-4o\",\"temperature\":0,\"messages\":[]}".getBytes(StandardCharsets.UTF_8);

    for (int i = 0; i < 2; i++) {
      GatewayRequest request = GatewayRequest.create("req-" + i, Route.CHAT_COMPLETIONS, Headers.EMPTY,
          (ObjectNode) Json.parse(body), body, FakeClock.at("2026-11-10T10:00:00Z").instant());
      request.setAttribute(RequestAttributes.CALLER, new Caller("release", Tier.GOLD, "k"));
      pipeline.execute(request);
    }

    assertThat(prometheus.scrape())
        .contains("spillway_cache_requests_total{result=\"hit\",route=\"chat\"} 1.0")
        .contains("spillway_cache_requests_total{result=\"miss\",route=\"chat\"} 1.0")
        .contains("spillway_cache_tokens_saved_total{tier=\"gold\"} 5.0")
        .contains("spillway_cache_size_bytes").contains("spillway_cache_entries 1.0")
        .contains("spillway_cache_inflight 0.0");
  }
}
