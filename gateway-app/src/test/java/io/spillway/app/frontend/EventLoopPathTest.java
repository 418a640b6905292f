package io.spillway.app.frontend;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.pipeline.Blocking;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * With the default single-gateway set-up (stores in memory, the breaker in memory), a cloud
 * request's stages do not block: it stays on its connection's event loop from the client's socket
 * to the upstream's and back, and no work moves to a virtual thread ({@link Blocking#handOffs}),
 * whatever the caller's tier, buffered or streamed. The local backend blocks, so a request served
 * there moves once.
 */
class EventLoopPathTest {
  private static final Map<String, String> KEYS = Map.of(
      "gold", GatewayHarness.GOLD_KEY, "silver", GatewayHarness.SILVER_KEY, "bronze", GatewayHarness.BRONZE_KEY);
  private static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start();
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void cloudAnswers() {
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(
            com.github.tomakehurst.wiremock.client.WireMock.containing("\"stream\":false"))
        .willReturn(OpenAiStubs.chatCompletion("Hello there")));
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(
            com.github.tomakehurst.wiremock.client.WireMock.containing("\"stream\":true"))
        .willReturn(OpenAiStubs.chatStream(true, "Hello", " there")));
    // The first request of a connection pool pays for lazy set-up; what is measured is the steady path.
    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "warm up", false));
  }

  @ParameterizedTest(name = "{0}, stream={1}")
  @CsvSource({"gold,false", "silver,false", "bronze,false", "gold,true", "silver,true", "bronze,true"})
  void aCloudAnswerMovesNoWorkOffTheEventLoopForAnyTierBufferedOrStreamed(String tier, boolean stream) {
    long before = Blocking.handOffs();

    HttpResponse<String> response = harness.post("/v1/chat/completions", KEYS.get(tier),
        GatewayHarness.chatBody("gpt-4o", "Say hello", stream));

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
    assertThat(response.body()).contains(stream ? "data: [DONE]" : "Hello there");
    assertThat(Blocking.handOffs() - before).isZero();
  }
}
