package io.spillway.app.api;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A request that no stage changes leaves for the upstream as the very bytes the client sent (its
 * spacing, key order, escapes and number spellings included): never written back from the parse.
 * For chat completions and the Responses API, buffered and streamed, the captured Codex turns among
 * them, at every tier.
 */
class UnchangedBodyForwardingTest {
  private static final Path CODEX = Path.of("../gateway-local-backend/src/test/resources/fixtures/codex");
  private static GatewayHarness gateway;

  /** Spellings a parse-and-write would change: spaces, a unicode escape, an exponent, key order, a float. */
  private static final String ODD_CHAT = "{ \"messages\" : [ {\"content\":\"caf\\u00e9 \\/ d\u00e9j\u00e0 vu\","
      + "  \"role\":\"user\"} ],\n  \"model\":\"gpt-4o-mini\", \"temperature\": 0.50, \"max_tokens\": 100,"
      + " \"stream\": false , \"metadata\": {\"b\": \"1\", \"a\": \"x\"}, \"logit_bias\": {\"50256\": -1e2}}";
  private static final String ODD_RESPONSES = "{\"input\":\"caf\\u00e9\",  \"model\" : \"gpt-4.1\",\"store\":false,"
      + "\"temperature\":1.00,\"stream\":false}";

  @BeforeAll
  static void start() {
    gateway = GatewayHarness.start();
    gateway.cloud.stubFor(post("/v1/chat/completions").atPriority(5).willReturn(OpenAiStubs.chatCompletion("ok")));
    gateway.cloud.stubFor(post("/v1/responses").atPriority(5).willReturn(OpenAiStubs.response("ok")));
  }

  @AfterAll
  static void stop() {
    gateway.close();
  }

  static Stream<Arguments> bodies() throws IOException {
    List<Arguments> cases = new ArrayList<>();
    for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
      String tier = key.equals(GatewayHarness.GOLD_KEY) ? "gold" : key.equals(GatewayHarness.SILVER_KEY) ? "silver" : "bronze";
      cases.add(Arguments.of(tier, key, "/v1/chat/completions", "odd chat, buffered", ODD_CHAT));
      cases.add(Arguments.of(tier, key, "/v1/responses", "odd responses, buffered", ODD_RESPONSES));
      cases.add(Arguments.of(tier, key, "/v1/responses", "odd responses, streamed",
          ODD_RESPONSES.replace("\"stream\":false", "\"stream\":true")));
      // As the clients sent them: Codex's Responses turns stream; its chat body asks for usage itself.
      cases.add(Arguments.of(tier, key, "/v1/responses", "codex first turn", fixture("first-turn.json")));
      cases.add(Arguments.of(tier, key, "/v1/responses", "codex turn with a function call output",
          fixture("turn-with-function-call-output.json")));
      cases.add(Arguments.of(tier, key, "/v1/chat/completions", "codex first turn as chat, streamed",
          fixture("first-turn.chat.json")));
      cases.add(Arguments.of(tier, key, "/v1/chat/completions", "codex first turn as chat, buffered",
          fixture("first-turn.chat.json").replace("\"stream\" : true", "\"stream\" : false")));
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}: {3}")
  @MethodSource("bodies")
  void aRequestNoStageChangesReachesTheUpstreamAsTheClientsExactBytes(
      String tier, String key, String path, String what, String body) throws IOException {
    gateway.cloud.resetRequests();
    String marker = "fwd-" + tier + "-" + what.replace(' ', '-').replace(',', '-');
    byte[] sent = body.getBytes(StandardCharsets.UTF_8);
    boolean stream = Json.parse(body).path("stream").asBoolean(false);
    if (stream) {
      gateway.cloud.stubFor(post(path).atPriority(1)
          .withHeader("x-client-marker", com.github.tomakehurst.wiremock.client.WireMock.equalTo(marker))
          .willReturn(path.endsWith("responses") ? OpenAiStubs.responseStream("o", "k")
              : OpenAiStubs.chatStream(true, "o", "k")));
    }

    HttpResponse<String> answer = gateway.send(HttpRequest.newBuilder(URI.create(gateway.url(path)))
        .timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json")
        .header("Authorization", "Bearer " + key)
        .header("x-client-marker", marker)
        .POST(HttpRequest.BodyPublishers.ofByteArray(sent))
        .build());

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(answer.headers().firstValue("x-spillway-degraded")).isEmpty();
    List<LoggedRequest> upstream = gateway.cloud.findAll(postRequestedFor(urlEqualTo(path)));
    assertThat(upstream).hasSize(1);
    assertThat(upstream.get(0).getBody()).isEqualTo(sent);
  }

  private static String fixture(String name) throws IOException {
    return Files.readString(CODEX.resolve(name));
  }
}
