package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.Gateway;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Spillway marks what it forwards with {@code Via: 1.1 spillway} and refuses with 508 a request that
 * already passed through Spillway more than {@code server.maxHops} times, so a gateway configured to
 * call itself stops after a few hops instead of 512.
 */
class SelfLoopTest {
  static final String KEY = "sk-loop-team";
  final List<Gateway> gateways = new ArrayList<>();
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @AfterEach
  void stop() {
    gateways.forEach(Gateway::close);
  }

  static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /** A gateway on {@code port} whose cloud is {@code cloudBaseUrl}; its own key is also its cloud key. */
  Gateway start(int port, String cloudBaseUrl) {
    return start(port, cloudBaseUrl, KEY, 1);
  }

  Gateway start(int port, String cloudBaseUrl, String cloudKey, int maxHops) {
    String yaml = """
        server: { host: 127.0.0.1, port: %d, drainTimeout: 2s, maxHops: %d }
        cloud: { baseUrl: "%s", apiKey: %s, timeout: 10s }
        local: { enabled: false }
        keys:
          - { key: %s, team: loop, tier: gold }
        store: memory
        """.formatted(port, maxHops, cloudBaseUrl, cloudKey, KEY);
    GatewayConfig config = new ConfigLoader(Map.<String, String>of()::get).parse("loop test", yaml);
    Gateway gateway = Gateway.start(config, FakeClock.at("2026-11-10T10:00:00Z"));
    gateways.add(gateway);
    return gateway;
  }

  HttpResponse<String> chat(Gateway gateway, String... headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/chat/completions"))
        .timeout(Duration.ofSeconds(20))
        .header("Authorization", "Bearer " + KEY)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(GatewayHarness.chatBody("gpt-4o", "hello", false)));
    if (headers.length > 0) {
      request.headers(headers);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  static void assertLoopDetected(HttpResponse<String> response) throws IOException {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(508);
    JsonNode error = Json.parse(response.body()).get("error");
    assertThat(error.get("type").asText()).isEqualTo("server_error");
    assertThat(error.get("code").asText()).isEqualTo("loop_detected");
    assertThat(error.get("message").asText()).contains("server.maxHops");
    assertThat(error.has("param")).isTrue();
  }

  @Test
  void aGatewayWhoseCloudIsItselfAnswers508AfterTwoHopsNotFiveHundred() throws Exception {
    int port = freePort();
    Gateway gateway = start(port, "http://127.0.0.1:" + port + "/v1");

    long started = System.nanoTime();
    HttpResponse<String> response = chat(gateway);

    assertLoopDetected(response);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    // The client's request, then one hop back in (allowed: maxHops 1), then a second one: refused.
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
        assertThat(gateway.metrics().series().totalRequests()).isEqualTo(3));
  }

  @Test
  void startingWithTheCloudOnItsOwnListenerLogsAWarning() throws Exception {
    int port = freePort();
    try (LogCapture logs = new LogCapture()) {
      start(port, "http://localhost:" + port + "/v1");

      assertThat(logs.lines()).anySatisfy(line -> assertThat(line).startsWith("WARN")
          .contains("cloud.baseUrl (http://localhost:" + port + "/v1) points at this gateway's own listener"));
    }
  }

  @Test
  void twoGatewaysChainedIntoALoopStopAtTheThirdPass() throws Exception {
    int portA = freePort();
    int portB = freePort();
    Gateway a = start(portA, "http://127.0.0.1:" + portB + "/v1");
    Gateway b = start(portB, "http://127.0.0.1:" + portA + "/v1");

    HttpResponse<String> response = chat(a);

    assertLoopDetected(response);
    assertThat(response.headers().firstValue("via")).hasValue("1.1 spillway");
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
      assertThat(a.metrics().series().totalRequests()).as("client's request, then the loop's return").isEqualTo(2);
      assertThat(b.metrics().series().totalRequests()).isEqualTo(1);
    });
  }

  @Test
  void aSidecarInFrontOfTheSharedGatewayIsNotALoopAndTheCloudSeesBothMarks() throws Exception {
    try (GatewayHarness shared = GatewayHarness.start()) {
      shared.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("through two")));
      Gateway sidecar = start(0, shared.baseUrl(), GatewayHarness.GOLD_KEY, 1);

      HttpResponse<String> response = chat(sidecar, "Via", "1.1 corp-proxy");

      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat(response.body()).contains("through two");
      shared.cloud.verify(postRequestedFor(urlEqualTo("/v1/chat/completions"))
          .withHeader("Via", equalTo("1.1 corp-proxy, 1.1 spillway, 1.1 spillway")));
    }
  }

  @Test
  void maxHopsZeroRefusesAnyRequestThatAlreadyCameThroughSpillway() throws Exception {
    try (GatewayHarness shared = GatewayHarness.start()) {
      shared.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("direct")));
      Gateway gateway = start(0, shared.cloud.baseUrl() + "/v1", GatewayHarness.CLOUD_KEY, 0);

      assertThat(chat(gateway).statusCode()).isEqualTo(200);
      assertThat(chat(gateway, "Via", "1.1 corp-proxy").statusCode()).isEqualTo(200);
      assertLoopDetected(chat(gateway, "Via", "1.1 corp-proxy, 1.0 Spillway (Spillway/0.1)"));
      shared.cloud.verify(2, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }

  @Test
  void theLocalBackendIsMarkedToo() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("failover: { capacityStreak: 1 }")) {
      harness.cloud.stubFor(post(anyUrl()).willReturn(OpenAiStubs.atCapacity()));
      harness.ollama.stubFor(post("/api/chat").willReturn(okJson("""
          {"model":"qwen2.5-coder:7b","created_at":"2026-11-10T10:00:00Z",
           "message":{"role":"assistant","content":"served locally"},
           "done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}""")));

      HttpResponse<String> response = harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", "hello", false), "Via", "1.1 edge");

      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
      harness.ollama.verify(postRequestedFor(urlEqualTo("/api/chat")).withHeader("Via", equalTo("1.1 edge, 1.1 spillway")));
    }
  }
}
