package io.spillway.app.observe;

import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * With tracing off a client's W3C trace context is passed on, but only within W3C's bounds: a
 * {@code tracestate} of 10 KiB (or a {@code traceparent} of kilobytes) is dropped, not carried
 * upstream; an ordinary one still travels. For every tier.
 */
class TraceContextBoundsTest {
  static final String TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start();
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void stub() {
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
  }

  private static void chat(String key, String traceparent, String tracestate) {
    assertThat(harness.post("/v1/chat/completions", key, GatewayHarness.chatBody("gpt-4o", "hi", false),
        "traceparent", traceparent, "tracestate", tracestate).statusCode()).isEqualTo(200);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void aTenKibTracestateIsDroppedAndAnOrdinaryOneForwarded(String key) {
    chat(key, TRACEPARENT, "vendor=" + "x".repeat(10 * 1024));
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
        .withHeader("tracestate", absent()).withHeader("traceparent", equalTo(TRACEPARENT)));

    harness.cloud.resetRequests();
    chat(key, TRACEPARENT, "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
        .withHeader("tracestate", equalTo("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7")));

    harness.cloud.resetRequests();
    chat(key, "00-" + "a".repeat(4096), "congo=t61rcWkgMzE");
    harness.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions")).withHeader("traceparent", absent()));
  }
}
