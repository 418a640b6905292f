package io.spillway.app.frontend;

import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.HoldingUpstream;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A client that leaves before its first byte, buffered or streamed, is noticed at once through the
 * real gateway: the upstream sees its connection closed long before {@code cloud.timeout}, the
 * admission slot (concurrency 1 here) and the token reservation are free for the next request, no
 * failover reaches the local backend, and the access log says {@code client_closed}.
 */
class ClientDisconnectTest {
  /** Far longer than the test waits: only a cancellation can end the upstream call in time. */
  private static final String CLOUD_TIMEOUT = "60s";
  private static final String PROMPT = "a question nobody waits for";

  private HoldingUpstream upstream;
  private GatewayHarness harness;
  private LogCapture logs;

  @BeforeEach
  void start() throws IOException {
    logs = new LogCapture();
    upstream = hangingUpstream();
  }

  @AfterEach
  void stop() throws IOException {
    if (harness != null) {
      harness.close();
    }
    upstream.close();
    logs.close();
  }

  private void startGateway(String tier) {
    harness = GatewayHarness.start("""
        cloud:
          baseUrl: %s
          timeout: %s
        quota:
          admission:
            cloudConcurrency: 1
        """.formatted(upstream.baseUrl(), CLOUD_TIMEOUT));
    // Anything that reaches the local backend would be answered: the test checks nothing does.
    harness.ollama.stubFor(com.github.tomakehurst.wiremock.client.WireMock.any(
        com.github.tomakehurst.wiremock.client.WireMock.anyUrl()).willReturn(OpenAiStubs.json(200, "{}")));
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void aClientThatLeavesBeforeTheFirstByteCancelsTheUpstreamCallAndFreesItsPlace(boolean stream) throws Exception {
    startGateway("gold");
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", PROMPT, stream)));
      await().atMost(Duration.ofSeconds(10)).until(() -> upstream.requests.get() >= 1);
      assertThat(reservedTokens("gold")).as("the estimate is held while the call runs").isPositive();
    }

    await().atMost(Duration.ofSeconds(3)).untilAsserted(() -> assertThat(upstream.closedWhileHeld)
        .as("the upstream sees its connection closed at once, not after cloud.timeout").hasValue(1));
    await().atMost(Duration.ofSeconds(5)).until(() -> !accessLines().isEmpty());
    JsonNode line = accessLines().get(0);
    assertThat(line.path("error").asText()).isEqualTo("client_closed");
    assertThat(line.path("outcome").asText()).isEqualTo("cancelled");
    assertThat(line.path("stream").asBoolean()).isEqualTo(stream);
    assertThat(reservedTokens("gold")).as("the reservation is released").isZero();

    HttpResponse<String> next = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "again", false));
    assertThat(next.statusCode()).as("the only cloud slot was given back: " + next.body()).isEqualTo(200);
    assertThat(harness.ollama.getAllServeEvents().stream().map(e -> e.getRequest().getBodyAsString()))
        .as("no local retry for a client that has gone (readiness probes and warm-ups aside)")
        .noneMatch(body -> body.contains(PROMPT));
  }

  private java.util.List<JsonNode> accessLines() {
    return logs.accessLines().stream().map(ClientDisconnectTest::parse).toList();
  }

  private long reservedTokens(String tier) {
    HttpResponse<String> quota = harness.get("/admin/quota", ADMIN_TOKEN);
    return parse(quota.body()).path("pools").path(tier).path("reserved").asLong(-1);
  }

  private static JsonNode parse(String text) {
    try {
      return Json.parse(text);
    } catch (IOException e) {
      throw new AssertionError("not JSON: " + text, e);
    }
  }

  /**
   * An upstream whose first request never gets an answer (its connection is held until the
   * gateway closes it); later requests get a plain chat completion.
   */
  private static HoldingUpstream hangingUpstream() throws IOException {
    return new HoldingUpstream((n, body, out) -> {
      if (n == 1) {
        return true;
      }
      HoldingUpstream.writeJson(out, OpenAiStubs.chatCompletionBody("hello again", 5, 3));
      return false;
    });
  }
}
