package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.json;
import static io.spillway.app.failover.FailoverFixtures.setBreaker;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.routing.capacity.CapacityClassifier;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Honest refusals: a request the local backend cannot serve is answered {@code unsupported_on_local},
 * naming what it cannot do, with a status and {@code Retry-After} that the breaker vouches for.
 * The local backend here is the Ollama one with the response store off ({@code responses.enabled:
 * false}), so it cannot rebuild a stored conversation ({@code previous_response_id}); with the store
 * on, ConversationFailoverTest shows the same conversation served.
 */
class UnsupportedOnLocalTest {
  private static final List<String> KEYS =
      List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY);

  private static final String STORE_OFF = """
      responses:
        enabled: false
      """;

  private static String stored(boolean stream) {
    return "{\"model\":\"gpt-4.1\",\"stream\":" + stream
        + ",\"input\":\"And the next line?\",\"previous_response_id\":\"resp_1\"}";
  }

  private static void assertNamesTheFieldWithoutRuleIds(JsonNode error) {
    assertThat(error.get("code").asText()).isEqualTo("unsupported_on_local");
    assertThat(error.get("param").asText()).isEqualTo("previous_response_id");
    String message = error.get("message").asText();
    assertThat(message).contains("previous_response_id").contains("Responses API");
    for (CapacityClassifier.Rule rule : CapacityClassifier.RULES) {
      if (rule.id().contains("_")) {
        assertThat(message).as("no classifier row id in the message").doesNotContain(rule.id());
      }
    }
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void forcedOpenRefusesWith400AndNoRetryAfterBecauseNoBackendWillServeIt(boolean stream) {
    try (GatewayHarness h = GatewayHarness.start(STORE_OFF)) {
      h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.response("cloud")));
      setBreaker(h, "{\"state\":\"open\"}");

      for (String key : KEYS) {
        HttpResponse<String> response = h.post("/v1/responses", key, stored(stream));

        assertThat(response.statusCode()).isEqualTo(400);
        assertThat(response.headers().firstValue("retry-after")).isEmpty();
        assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
        JsonNode error = json(response).get("error");
        assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
        assertNamesTheFieldWithoutRuleIds(error);
        assertThat(error.get("message").asText()).contains("An operator has forced all traffic to the local backend");
      }
      h.cloud.verify(0, postRequestedFor(urlEqualTo("/v1/responses")));
      h.ollama.verify(0, postRequestedFor(urlEqualTo("/api/chat")));
    }
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void openOnItsOwnWithTheCloudStillFullRefusesWith503UntilTheNextProbe(boolean stream) {
    try (GatewayHarness h = GatewayHarness.start(STORE_OFF)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.atCapacity()));
      for (int i = 0; i < 3; i++) {
        h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "hi", false));
      }
      assertThat(breaker(h).get("state").asText()).isEqualTo("open");
      h.clock.advance(Duration.ofSeconds(100));

      for (String key : KEYS) {
        HttpResponse<String> response = h.post("/v1/responses", key, stored(stream));

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("retry-after")).as("until the next probe").hasValue("200");
        assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
        assertThat(response.headers().firstValue("x-spillway-fallback")).hasValue("local_unsupported");
        JsonNode error = json(response).get("error");
        assertThat(error.get("type").asText()).isEqualTo("server_error");
        assertNamesTheFieldWithoutRuleIds(error);
        assertThat(error.get("message").asText()).contains("The cloud, tried instead, is at capacity")
            .contains("Retry after 200s");
      }
      h.cloud.verify(3, postRequestedFor(urlEqualTo("/v1/responses")));
      assertThat(breaker(h).get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:05:00Z");
    }
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void aCapacityAnswerWhileClosedRefusesWith503AndTheCloudsOwnRetryAfter(boolean stream) {
    try (GatewayHarness h = GatewayHarness.start(STORE_OFF)) {
      h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.atCapacity().withHeader("Retry-After", "7")));

      HttpResponse<String> response = h.post("/v1/responses", GatewayHarness.SILVER_KEY, stored(stream));

      assertThat(response.statusCode()).isEqualTo(503);
      assertThat(response.headers().firstValue("retry-after")).hasValue("7");
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
      JsonNode error = json(response).get("error");
      assertNamesTheFieldWithoutRuleIds(error);
      assertThat(error.get("message").asText()).contains("The cloud, tried first, is at capacity");
      assertThat(breaker(h).get("streak").asInt()).isEqualTo(1);
    }
  }
}
