package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.FailoverFixtures.CLOUD_TEXT;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_OPENAI;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_TEXT;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.closedPort;
import static io.spillway.app.failover.FailoverFixtures.json;
import static io.spillway.app.failover.FailoverFixtures.setBreaker;
import static io.spillway.app.failover.FailoverFixtures.stubChat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.Counter;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Local broken, cloud tried: while the breaker is open on its own, a request the local backend cannot
 * serve goes to the cloud once before any 503, streamed or buffered, for every tier; the answer says
 * so in {@code x-spillway-fallback}. The cloud try is not the probe: it changes nothing in the breaker.
 * Forced open by an operator, requests stay local.
 */
class LocalFallbackTest {
  private static final List<String> KEYS =
      List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY);

  /** One way for local to break: the config to start with, and what breaks it once the breaker is open. */
  record Breakage(String name, String config, String path, String body, Consumer<GatewayHarness> breakLocal,
      String fallback) {
    @Override
    public String toString() {
      return name;
    }

    String body(boolean stream) {
      return body.formatted(stream);
    }
  }

  private static final String CHAT = "{\"model\":\"gpt-4o\",\"stream\":%s,"
      + "\"messages\":[{\"role\":\"user\",\"content\":\"Write a haiku about rivers\"}]}";

  static Stream<Breakage> breakages() {
    int refusedPort = closedPort();
    return Stream.of(
        new Breakage("unsupported on local (Ollama)", "", "/v1/responses",
            "{\"model\":\"gpt-4.1\",\"stream\":%s,\"input\":\"And the next line?\",\"conversation\":\"conv_1\"}",
            h -> {}, "local_unsupported"),
        new Breakage("local answers 500", LOCAL_OPENAI, "/v1/chat/completions", CHAT,
            h -> h.ollama.stubFor(post("/v1/chat/completions").atPriority(0).willReturn(OpenAiStubs.json(500,
                "{\"error\":{\"message\":\"CUDA error: out of memory\",\"type\":\"server_error\"}}"))),
            "local_error"),
        new Breakage("local refuses connections", LOCAL_OPENAI, "/v1/chat/completions", CHAT,
            h -> h.ollama.stop(), "local_unreachable"),
        new Breakage("local not ready", """
            local:
              kind: openai
              baseUrl: http://127.0.0.1:%d
            """.formatted(refusedPort), "/v1/chat/completions", CHAT,
            h -> await().atMost(Duration.ofSeconds(10)).until(() -> !h.gateway().local().readiness().ready()),
            "local_not_ready"));
  }

  /** Three capacity answers (each served locally while local still works): the breaker opens on its own. */
  private static void openBreakerOnItsOwn(GatewayHarness h) {
    await().atMost(Duration.ofSeconds(10)).until(() -> h.gateway().local().readiness().checked());
    h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    for (int i = 0; i < 3; i++) {
      h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "hi", false));
    }
    assertThat(breaker(h).get("state").asText()).isEqualTo("open");
    assertThat(breaker(h).get("override").asText()).isEqualTo("auto");
  }

  private static void stubCloudServing(GatewayHarness h) {
    h.cloud.resetAll();
    stubChat(h.cloud, CLOUD_TEXT);
    h.cloud.stubFor(post("/v1/responses").atPriority(1)
        .withRequestBody(com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath("$.stream",
            com.github.tomakehurst.wiremock.client.WireMock.equalTo("true")))
        .willReturn(OpenAiStubs.responseStream("Served by ", "the cloud")));
    h.cloud.stubFor(post("/v1/responses").atPriority(5).willReturn(OpenAiStubs.response(CLOUD_TEXT)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("breakages")
  void whileOpenOnItsOwnARequestLocalCannotServeGoesToTheCloudOnceForEveryTierStreamedOrNot(Breakage breakage) {
    try (GatewayHarness h = GatewayHarness.start(breakage.config())) {
      stubChat(h.ollama, LOCAL_TEXT);
      openBreakerOnItsOwn(h);
      String nextProbeAt = breaker(h).get("nextProbeAt").asText();
      breakage.breakLocal().accept(h);
      stubCloudServing(h);

      int served = 0;
      for (String key : KEYS) {
        for (boolean stream : List.of(false, true)) {
          HttpResponse<String> response = h.post(breakage.path(), key, breakage.body(stream));
          served++;

          assertThat(response.statusCode()).as("%s stream=%s", key, stream).isEqualTo(200);
          assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
          String fallback = response.headers().firstValue("x-spillway-fallback").orElseThrow();
          if (breakage.fallback().equals("local_unreachable") && served > 1) {
            // A refused connection may mark local not ready until its next readiness probe says otherwise.
            assertThat(fallback).isIn("local_unreachable", "local_not_ready");
          } else {
            assertThat(fallback).isEqualTo(breakage.fallback());
          }
          assertThat(response.body()).contains("cloud").doesNotContain("locally");
          h.cloud.verify(served, postRequestedFor(urlEqualTo(breakage.path())));
        }
      }

      JsonNode after = breaker(h);
      assertThat(after.get("state").asText()).as("the cloud try is not the probe").isEqualTo("open");
      assertThat(after.get("nextProbeAt").asText()).isEqualTo(nextProbeAt);
      double fallbacks = h.gateway().meters().get("spillway.router.fallbacks").counters().stream()
          .mapToDouble(Counter::count).sum();
      assertThat(fallbacks).isEqualTo(served);
    }
  }

  @Test
  void whenTheCloudTriedInsteadIsStillAtCapacityTheClientGets503UntilTheNextProbe() {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      stubChat(h.ollama, LOCAL_TEXT);
      openBreakerOnItsOwn(h);
      h.ollama.stubFor(post("/v1/chat/completions").atPriority(0).willReturn(OpenAiStubs.json(502,
          "{\"error\":\"bad gateway\"}")));
      h.clock.advance(Duration.ofMinutes(2));

      for (String key : KEYS) {
        for (boolean stream : List.of(false, true)) {
          HttpResponse<String> response =
              h.post("/v1/chat/completions", key, GatewayHarness.chatBody("gpt-4o", "hi", stream));

          assertThat(response.statusCode()).isEqualTo(503);
          assertThat(response.headers().firstValue("retry-after")).as("the time until the probe").hasValue("180");
          assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
          assertThat(response.headers().firstValue("x-spillway-fallback")).hasValue("local_error");
          JsonNode error = json(response).get("error");
          assertThat(error.get("code").asText()).isEqualTo("model_at_capacity");
          assertThat(error.get("message").asText())
              .contains("the local backend answered with a server error")
              .contains("the cloud, tried instead, is at capacity")
              .contains("Retry after 180s")
              .doesNotContain("server_error)").doesNotContain("at_capacity_message");
        }
      }
      h.cloud.verify(3 + 6, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(breaker(h).get("nextProbeAt").asText()).as("capacity answers of cloud tries do not extend open")
          .isEqualTo("2026-11-10T10:05:00Z");
      assertThat(breaker(h).get("history")).hasSize(1);
    }
  }

  @Test
  void forcedOpenByAnOperatorStaysLocalEvenWhenLocalIsDown() {
    String config = """
        local:
          kind: openai
          baseUrl: http://127.0.0.1:%d
        """.formatted(closedPort());
    try (GatewayHarness h = GatewayHarness.start(config)) {
      stubChat(h.cloud, CLOUD_TEXT);
      assertThat(setBreaker(h, "{\"state\":\"open\"}").statusCode()).isEqualTo(200);

      for (String key : KEYS) {
        for (boolean stream : List.of(false, true)) {
          HttpResponse<String> response =
              h.post("/v1/chat/completions", key, GatewayHarness.chatBody("gpt-4o", "hi", stream));

          assertThat(response.statusCode()).isEqualTo(503);
          assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
          assertThat(response.headers().firstValue("x-spillway-fallback")).isEmpty();
          assertThat(response.headers().firstValue("retry-after")).isPresent();
          assertThat(json(response).get("error").get("message").asText()).contains("An operator has forced");
        }
      }
      h.cloud.verify(0, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }
}
