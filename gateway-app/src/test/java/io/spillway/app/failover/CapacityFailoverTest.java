package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.FailoverFixtures.CLOUD_TEXT;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_OPENAI;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_TEXT;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.chat;
import static io.spillway.app.failover.FailoverFixtures.chatStream;
import static io.spillway.app.failover.FailoverFixtures.closedPort;
import static io.spillway.app.failover.FailoverFixtures.json;
import static io.spillway.app.failover.FailoverFixtures.stubChat;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.http.Fault;
import com.openai.client.OpenAIClient;
import io.spillway.app.failover.FailoverFixtures.Served;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Capacity failover end to end: the real gateway, the official OpenAI Java SDK as the client, and
 * WireMock stand-ins for the cloud and the local server. Time moves only through the fake clock.
 */
class CapacityFailoverTest {

  @Test
  void threeCapacityAnswersMoveTrafficLocalAndAProbeBringsItBack() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      stubChat(h.ollama, LOCAL_TEXT);

      for (int i = 0; i < 3; i++) {
        assertThat(chat(client)).as("capacity answer %d is retried locally", i + 1)
            .isEqualTo(new Served("local", LOCAL_TEXT));
      }
      h.cloud.verify(3, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      JsonNode open = breaker(h);
      assertThat(open.get("state").asText()).isEqualTo("open");
      assertThat(open.get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:05:00Z");

      assertThat(chat(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      assertThat(chatStream(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      h.cloud.verify(3, postRequestedFor(urlEqualTo("/v1/chat/completions")));

      h.clock.advance(Duration.ofMinutes(5));
      h.cloud.resetAll();
      stubChat(h.cloud, CLOUD_TEXT);

      assertThat(chat(client)).as("the probe").isEqualTo(new Served("cloud", CLOUD_TEXT));
      assertThat(breaker(h).get("state").asText()).isEqualTo("closed");
      assertThat(chatStream(client)).isEqualTo(new Served("cloud", CLOUD_TEXT));
      assertThat(chat(client)).isEqualTo(new Served("cloud", CLOUD_TEXT));
      h.cloud.verify(3, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      h.ollama.verify(5, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(breaker(h).get("history")).extracting(e -> e.get("from").asText() + ">" + e.get("to").asText())
          .containsExactly("closed>open", "open>half_open", "half_open>closed");
      assertThat(h.gateway().meters().get("spillway.failovers").tag("reason", "capacity").counter().count())
          .isEqualTo(3);
      assertThat(h.gateway().meters().get("spillway.breaker.transitions").tags("from", "closed", "to", "open")
          .counter().count()).isEqualTo(1);
    }
  }

  @Test
  void streamedCapacityAnswersAreRetriedLocallyToo() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      stubChat(h.ollama, LOCAL_TEXT);

      for (int i = 0; i < 3; i++) {
        assertThat(chatStream(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      }

      assertThat(breaker(h).get("state").asText()).isEqualTo("open");
      assertThat(chatStream(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      h.cloud.verify(3, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }

  static Stream<Arguments> routes() {
    Supplier<ResponseDefinitionBuilder> chat = () -> OpenAiStubs.chatCompletion(LOCAL_TEXT);
    Supplier<ResponseDefinitionBuilder> chatStream = () -> OpenAiStubs.chatStream(false, "Served ", "locally");
    Supplier<ResponseDefinitionBuilder> completion = () -> OpenAiStubs.completion(LOCAL_TEXT);
    Supplier<ResponseDefinitionBuilder> completionStream = () -> OpenAiStubs.completionStream("Served ", "locally");

    String chatBody = "{\"model\":\"gpt-4o\",\"stream\":%s,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    String completionBody = "{\"model\":\"gpt-3.5-turbo-instruct\",\"stream\":%s,\"prompt\":\"def add(a, b):\"}";
    String responseBody = "{\"model\":\"gpt-4.1\",\"stream\":%s,\"input\":\"hi\"}";
    // A local OpenAI-compatible server gets the Responses API as chat completions (local.responsesApi: chat).
    return Stream.of(
        Arguments.of("/v1/chat/completions", chatBody.formatted(false), "/v1/chat/completions", chat),
        Arguments.of("/v1/chat/completions", chatBody.formatted(true), "/v1/chat/completions", chatStream),
        Arguments.of("/v1/completions", completionBody.formatted(false), "/v1/completions", completion),
        Arguments.of("/v1/completions", completionBody.formatted(true), "/v1/completions", completionStream),
        Arguments.of("/v1/responses", responseBody.formatted(false), "/v1/chat/completions", chat),
        Arguments.of("/v1/responses", responseBody.formatted(true), "/v1/chat/completions", chatStream));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("routes")
  void aCapacityAnswerIsRetriedLocallyOnEveryRouteStreamedOrNot(
      String path, String body, String localPath, Supplier<ResponseDefinitionBuilder> localAnswer) {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      h.cloud.stubFor(post(path).willReturn(OpenAiStubs.atCapacity()));
      h.ollama.stubFor(post(localPath).willReturn(localAnswer.get()));

      HttpResponse<String> response = h.post(path, GatewayHarness.GOLD_KEY, body);

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(response.body()).doesNotContain("capacity");
      h.ollama.verify(1, postRequestedFor(urlEqualTo(localPath)));
      assertThat(breaker(h).get("streak").asInt()).isEqualTo(1);
    }
  }

  @Test
  void localDownWhileOpenTriesTheCloudOnceThenGets503WithRetryAfterUntilTheNextProbe() {
    String config = """
        local:
          kind: openai
          baseUrl: http://127.0.0.1:%d
        """.formatted(closedPort());
    try (GatewayHarness h = GatewayHarness.start(config)) {
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      String body = GatewayHarness.chatBody("gpt-4o", "hi", false);
      for (int i = 0; i < 3; i++) {
        HttpResponse<String> failed = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, body);
        assertThat(failed.statusCode()).isEqualTo(503);
        assertThat(failed.headers().firstValue("retry-after")).isPresent();
      }
      assertThat(breaker(h).get("state").asText()).isEqualTo("open");
      h.clock.advance(Duration.ofMinutes(2));

      HttpResponse<String> response = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, body);

      assertThat(response.statusCode()).isEqualTo(503);
      assertThat(response.headers().firstValue("retry-after")).hasValue("180");
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(response.headers().firstValue("x-spillway-fallback")).hasValue("local_not_ready");
      JsonNode error = json(response).get("error");
      assertThat(error.get("type").asText()).isEqualTo("server_error");
      assertThat(error.get("code").asText()).isEqualTo("model_at_capacity");
      assertThat(error.get("message").asText()).contains("local backend is not ready")
          .contains("tried instead, is at capacity").contains("Retry after 180s");
      h.cloud.verify(4, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(breaker(h).get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:05:00Z");
    }
  }

  @Test
  void localDisabledTurnsACapacityAnswerInto503WithRetryAfter() {
    try (GatewayHarness h = GatewayHarness.start("local:\n  enabled: false\n")) {
      stubChat(h.cloud, OpenAiStubs.atCapacity().withHeader("Retry-After", "7"));

      HttpResponse<String> response =
          h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "hi", false));

      assertThat(response.statusCode()).isEqualTo(503);
      assertThat(response.headers().firstValue("retry-after")).hasValue("7");
      assertThat(json(response).get("error").get("message").asText()).contains("local.enabled: false");
    }
  }

  static Stream<Arguments> passedThrough() {
    return Stream.of(
        Arguments.of("insufficient_quota", OpenAiStubs.insufficientQuota(), "20"),
        Arguments.of("rate_limit_exceeded", OpenAiStubs.rateLimited(), "1"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("passedThrough")
  void rateLimitAndQuotaAnswersReachTheClientWithRetryAfterAndNeverTripTheBreaker(
      String code, ResponseDefinitionBuilder answer, String retryAfter) {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      stubChat(h.cloud, answer);
      stubChat(h.ollama, LOCAL_TEXT);
      String body = GatewayHarness.chatBody("gpt-4o", "hi", false);

      for (int i = 0; i < 5; i++) {
        HttpResponse<String> response = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, body);
        assertThat(response.statusCode()).isEqualTo(429);
        assertThat(response.headers().firstValue("retry-after")).hasValue(retryAfter);
        assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
        assertThat(json(response).get("error").get("code").asText()).isEqualTo(code);
      }

      JsonNode breaker = breaker(h);
      assertThat(breaker.get("state").asText()).isEqualTo("closed");
      assertThat(breaker.get("streak").asInt()).isZero();
      h.ollama.verify(0, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }

  @Test
  void theSdkSeesQuotaExhaustionAsAnError() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      stubChat(h.cloud, OpenAiStubs.insufficientQuota());

      org.assertj.core.api.Assertions.assertThatThrownBy(() -> chat(h.openAi(GatewayHarness.GOLD_KEY)))
          .isInstanceOf(com.openai.errors.RateLimitException.class)
          .hasMessageContaining("exceeded your current quota");
    }
  }

  @Test
  void aStreamThatBreaksAfterItsFirstEventEndsWithAnErrorEventAndNoFailover() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      String full = OpenAiStubs.chatStreamBody(false, "Hel", "lo", " world");
      String cut = full.substring(0, full.indexOf("\" world\""));
      cut = cut.substring(0, cut.lastIndexOf("data: "));
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(
          aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(cut)));
      stubChat(h.ollama, LOCAL_TEXT);

      HttpResponse<String> response = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          GatewayHarness.chatBody("gpt-4o", "hi", true));

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(response.body()).contains("\"Hel\"").contains("\"lo\"").doesNotContain(LOCAL_TEXT);
      assertThat(response.body()).contains("data: {\"error\":").endsWith("data: [DONE]\n\n");
      h.ollama.verify(0, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(breaker(h).get("streak").asInt()).isZero();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"MALFORMED_RESPONSE_CHUNK", "CONNECTION_RESET_BY_PEER", "EMPTY_RESPONSE"})
  void aCloudThatFailsBeforeItsFirstEventIsRetriedLocally(String fault) {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, aResponse().withFault(Fault.valueOf(fault)));
      stubChat(h.ollama, LOCAL_TEXT);

      assertThat(chatStream(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      assertThat(chat(client)).isEqualTo(new Served("local", LOCAL_TEXT));

      JsonNode breaker = breaker(h);
      assertThat(breaker.get("state").asText()).as("transient failures do not open the breaker").isEqualTo("closed");
      assertThat(breaker.get("streak").asInt()).isZero();
    }
  }

  @Test
  void aCapacityErrorAsTheFirstStreamEventIsRetriedLocally() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      String capacity = "{\"error\":{\"message\":\"Selected model is at capacity. Please try a different model.\","
          + "\"type\":\"server_error\",\"param\":null,\"code\":null}}";
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
          .withHeader("Content-Type", "text/event-stream").withBody("data: " + capacity + "\n\n")));
      stubChat(h.ollama, LOCAL_TEXT);

      assertThat(chatStream(h.openAi(GatewayHarness.GOLD_KEY))).isEqualTo(new Served("local", LOCAL_TEXT));
      assertThat(breaker(h).get("streak").asInt()).isEqualTo(1);
    }
  }

  @Test
  void cloudConnectionRefusedIsServedLocally() {
    String config = """
        cloud:
          baseUrl: http://127.0.0.1:%d/v1
        local:
          kind: openai
        """.formatted(closedPort());
    try (GatewayHarness h = GatewayHarness.start(config)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.ollama, LOCAL_TEXT);

      assertThat(chat(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      assertThat(chatStream(client)).isEqualTo(new Served("local", LOCAL_TEXT));
      assertThat(h.gateway().meters().get("spillway.failovers").tag("reason", "transient").counter().count())
          .isEqualTo(2);
    }
  }

  @Test
  void cloudUnreachableAndLocalDownGivesTheCloudsOwnFailure() {
    String config = """
        cloud:
          baseUrl: http://127.0.0.1:%d/v1
        local:
          kind: openai
          baseUrl: http://127.0.0.1:%d
        """.formatted(closedPort(), closedPort());
    try (GatewayHarness h = GatewayHarness.start(config)) {
      HttpResponse<String> response =
          h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "hi", false));

      assertThat(response.statusCode()).isEqualTo(502);
      assertThat(json(response).get("error").get("code").asText()).isEqualTo("upstream_unreachable");
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(breaker(h).get("state").asText()).isEqualTo("closed");
    }
  }

  @Test
  void retryAfterFromACapacityAnswerExtendsLocalFor() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, OpenAiStubs.atCapacity().withHeader("Retry-After", "600"));
      stubChat(h.ollama, LOCAL_TEXT);
      for (int i = 0; i < 3; i++) {
        chat(client);
      }
      assertThat(breaker(h).get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:10:00Z");

      h.clock.advance(Duration.ofMinutes(5));
      h.cloud.resetAll();
      stubChat(h.cloud, CLOUD_TEXT);
      assertThat(chat(client)).as("still within the cloud's Retry-After").isEqualTo(new Served("local", LOCAL_TEXT));

      h.clock.advance(Duration.ofMinutes(5));
      assertThat(chat(client)).as("the probe").isEqualTo(new Served("cloud", CLOUD_TEXT));
      assertThat(breaker(h).get("state").asText()).isEqualTo("closed");
    }
  }

  @Test
  void aProbeThatGetsCapacityKeepsTrafficLocalForAnotherLocalFor() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI + "failover:\n  localFor: 90s\n")) {
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      stubChat(h.ollama, LOCAL_TEXT);
      for (int i = 0; i < 3; i++) {
        chat(client);
      }
      h.clock.advance(Duration.ofSeconds(90));

      assertThat(chat(client)).as("the probe is retried locally").isEqualTo(new Served("local", LOCAL_TEXT));

      h.cloud.verify(4, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      JsonNode breaker = breaker(h);
      assertThat(breaker.get("state").asText()).isEqualTo("open");
      assertThat(breaker.get("nextProbeAt").asText()).isEqualTo("2026-11-10T10:03:00Z");
      chat(client);
      h.cloud.verify(4, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }
}
