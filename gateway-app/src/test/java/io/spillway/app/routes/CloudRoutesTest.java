package io.spillway.app.routes;

import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.MappingBuilder;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two cloud routes through the real gateway: {@code primary} (OpenAI-style) and {@code azure-eu}
 * (Azure OpenAI deployment URLs), then the local backend. Each route is a WireMock fake; the Azure
 * one only answers at the deployment URL with the {@code api-key} header and {@code api-version}.
 */
class CloudRoutesTest {
  private static final String AZURE_KEY = "azure-route-secret-key";
  private static final String PRIMARY_KEY = "sk-primary-route-secret";
  private static final String API_VERSION = "2024-10-21";
  private static final String DEPLOYMENT = "gpt4o-eu";
  private static final String AZURE_CHAT = "/openai/deployments/" + DEPLOYMENT + "/chat/completions";
  private static final String PRIMARY_TEXT = "Served by the primary route";
  private static final String AZURE_TEXT = "Served by the Azure route";
  private static final String LOCAL_TEXT = "Served locally";

  private WireMockServer primary;
  private WireMockServer azure;
  private GatewayHarness h;

  @BeforeEach
  void start() {
    primary = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    azure = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    primary.start();
    azure.start();
    // The harness's base config has the one-route shorthand; nulls take it out for the list.
    h = GatewayHarness.start("""
        cloud:
          baseUrl: null
          apiKey: null
          routes:
            - name: primary
              kind: openai
              baseUrl: %s/v1
              apiKey: %s
            - name: azure-eu
              kind: azure
              baseUrl: %s
              apiKey: %s
              apiVersion: %s
              models:
                gpt-4o: %s
        local:
          kind: openai
        """.formatted(primary.baseUrl(), PRIMARY_KEY, azure.baseUrl(), AZURE_KEY, API_VERSION, DEPLOYMENT));
    stubLocal(LOCAL_TEXT);
  }

  @AfterEach
  void stop() {
    h.close();
    primary.stop();
    azure.stop();
  }

  static Stream<Arguments> tiersAndBodies() {
    return Stream.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)
        .flatMap(key -> Stream.of(Arguments.of(key, false), Arguments.of(key, true)));
  }

  @ParameterizedTest(name = "{0} stream={1}")
  @MethodSource("tiersAndBodies")
  void capacityOnTheFirstRouteIsServedByTheSecond(String key, boolean stream) {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    stubAzure(AZURE_TEXT);

    HttpResponse<String> response = chat(key, "gpt-4o", stream);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
    assertThat(response.headers().firstValue("x-spillway-route")).hasValue("azure-eu");
    assertThat(text(response, stream)).isEqualTo(AZURE_TEXT);
    primary.verify(1, postRequestedFor(urlPathEqualTo("/v1/chat/completions"))
        .withHeader("Authorization", equalTo("Bearer " + PRIMARY_KEY)));
    azure.verify(1, postRequestedFor(urlPathEqualTo(AZURE_CHAT))
        .withQueryParam("api-version", equalTo(API_VERSION))
        .withHeader("api-key", equalTo(AZURE_KEY))
        .withHeader("Authorization", absent())
        .withRequestBody(matchingJsonPath("$.model", equalTo(DEPLOYMENT))));
    h.ollama.verify(0, postRequestedFor(urlPathEqualTo("/v1/chat/completions")));
  }

  @ParameterizedTest(name = "{0} stream={1}")
  @MethodSource("tiersAndBodies")
  void everyRouteAtCapacityIsServedLocally(String key, boolean stream) {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    azure.stubFor(post(urlPathEqualTo(AZURE_CHAT)).willReturn(OpenAiStubs.overloaded().withHeader("retry-after", "3")));

    HttpResponse<String> response = chat(key, "gpt-4o", stream);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
    assertThat(response.headers().firstValue("x-spillway-route")).isEmpty();
    assertThat(text(response, stream)).isEqualTo(LOCAL_TEXT);
    azure.verify(1, postRequestedFor(urlPathEqualTo(AZURE_CHAT)));
  }

  @Test
  void aHealthyFirstRouteServesAndTheOthersAreNotCalled() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(PRIMARY_TEXT)));
    stubAzure(AZURE_TEXT);

    HttpResponse<String> response = chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);

    assertThat(response.headers().firstValue("x-spillway-route")).hasValue("primary");
    assertThat(text(response, false)).isEqualTo(PRIMARY_TEXT);
    azure.verify(0, postRequestedFor(urlPathEqualTo(AZURE_CHAT)));
  }

  @Test
  void anAzureRouteWithoutADeploymentForTheModelIsSkipped() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    stubAzure(AZURE_TEXT);

    HttpResponse<String> response = chat(GatewayHarness.GOLD_KEY, "gpt-4o-mini", false);

    assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
    assertThat(text(response, false)).isEqualTo(LOCAL_TEXT);
    azure.verify(0, postRequestedFor(urlPathEqualTo("/openai/deployments/gpt-4o-mini/chat/completions")));
    assertThat(azure.getAllServeEvents()).isEmpty();
  }

  @Test
  void eachRouteHasItsOwnBreakerAndTrafficMovesToTheNextRouteNotLocal() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    stubAzure(AZURE_TEXT);
    for (int i = 0; i < 3; i++) {
      assertThat(chat(GatewayHarness.SILVER_KEY, "gpt-4o", false).headers().firstValue("x-spillway-route"))
          .hasValue("azure-eu");
    }
    JsonNode breaker = breaker();
    assertThat(breaker.get("routes").get(0).get("route").asText()).isEqualTo("primary");
    assertThat(breaker.get("routes").get(0).get("state").asText()).isEqualTo("open");
    assertThat(breaker.get("routes").get(1).get("route").asText()).isEqualTo("azure-eu");
    assertThat(breaker.get("routes").get(1).get("state").asText()).isEqualTo("closed");

    HttpResponse<String> whileOpen = chat(GatewayHarness.BRONZE_KEY, "gpt-4o", true);
    assertThat(whileOpen.headers().firstValue("x-spillway-route")).hasValue("azure-eu");
    assertThat(whileOpen.headers().firstValue("x-spillway-degraded").orElse(""))
        .as("a route still takes traffic: no pressure toward local").doesNotContain("local");
    primary.verify(3, postRequestedFor(urlPathEqualTo("/v1/chat/completions")));

    String metrics = h.get("/metrics", null).body();
    assertThat(metrics).contains("spillway_breaker_state{route=\"primary\"} 2.0")
        .contains("spillway_breaker_state{route=\"azure-eu\"} 0.0")
        .containsPattern("spillway_breaker_transitions_total\\{from=\"closed\",route=\"primary\",to=\"open\"} 1.0")
        .containsPattern("spillway_failovers_total\\{reason=\"capacity\",route=\"primary\"} 3.0");
  }

  @Test
  void theWayBackIsProbedPerRouteAfterLocalFor() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    azure.stubFor(post(urlPathEqualTo(AZURE_CHAT)).willReturn(OpenAiStubs.atCapacity()));
    for (int i = 0; i < 3; i++) {
      assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).headers().firstValue("x-spillway-backend"))
          .hasValue("local");
    }
    assertThat(breaker().get("routes").findValuesAsText("state")).containsExactly("open", "open");
    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).headers().firstValue("x-spillway-backend"))
        .as("both open: straight to local").hasValue("local");
    primary.verify(3, postRequestedFor(urlPathEqualTo("/v1/chat/completions")));
    azure.verify(3, postRequestedFor(urlPathEqualTo(AZURE_CHAT)));

    h.clock.advance(Duration.ofMinutes(5));
    azure.resetAll();
    stubAzure(AZURE_TEXT);
    HttpResponse<String> probes = chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);

    assertThat(probes.headers().firstValue("x-spillway-route")).as("the primary's probe failed, the Azure probe served")
        .hasValue("azure-eu");
    assertThat(text(probes, false)).isEqualTo(AZURE_TEXT);
    assertThat(breaker().get("routes").findValuesAsText("state")).containsExactly("open", "closed");
    primary.verify(4, postRequestedFor(urlPathEqualTo("/v1/chat/completions")));

    h.clock.advance(Duration.ofMinutes(5));
    primary.resetAll();
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(PRIMARY_TEXT)));
    HttpResponse<String> back = chat(GatewayHarness.BRONZE_KEY, "gpt-4o", false);

    assertThat(back.headers().firstValue("x-spillway-route")).hasValue("primary");
    assertThat(breaker().get("routes").findValuesAsText("state")).containsExactly("closed", "closed");
    assertThat(breaker().get("state").asText()).as("the top level is the first route, as with one route")
        .isEqualTo("closed");
  }

  @Test
  void whenLocalCannotServeTheOpenRoutesAreTriedOnceEachInOrder() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    azure.stubFor(post(urlPathEqualTo(AZURE_CHAT)).willReturn(OpenAiStubs.atCapacity()));
    for (int i = 0; i < 3; i++) {
      chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);
    }
    assertThat(breaker().get("routes").findValuesAsText("state")).containsExactly("open", "open");
    h.ollama.resetAll();
    h.ollama.stubFor(post(urlPathEqualTo("/v1/chat/completions")).willReturn(OpenAiStubs.json(500,
        "{\"error\":{\"message\":\"model crashed\",\"type\":\"server_error\",\"param\":null,\"code\":null}}")));
    azure.resetAll();
    stubAzure(AZURE_TEXT);

    HttpResponse<String> response = chat(GatewayHarness.SILVER_KEY, "gpt-4o", true);

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("x-spillway-fallback")).hasValue("local_error");
    assertThat(response.headers().firstValue("x-spillway-route")).hasValue("azure-eu");
    assertThat(text(response, true)).isEqualTo(AZURE_TEXT);
    primary.verify(4, postRequestedFor(urlPathEqualTo("/v1/chat/completions")));
    assertThat(breaker().get("routes").findValuesAsText("state"))
        .as("a fallback try is not the probe: neither breaker moves").containsExactly("open", "open");
  }

  @Test
  void whenNoRouteAndNotLocalCanServeTheClientGets503WithTheEarliestRetryAfter() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    azure.stubFor(post(urlPathEqualTo(AZURE_CHAT)).willReturn(OpenAiStubs.atCapacity()));
    h.ollama.resetAll();
    h.ollama.stubFor(post(urlPathEqualTo("/v1/chat/completions")).willReturn(OpenAiStubs.json(500,
        "{\"error\":{\"message\":\"model crashed\",\"type\":\"server_error\",\"param\":null,\"code\":null}}")));

    HttpResponse<String> response = chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);

    assertThat(response.statusCode()).isEqualTo(503);
    assertThat(response.headers().firstValue("retry-after")).hasValue("1");
    assertThat(json(response).at("/error/code").asText()).isEqualTo("model_at_capacity");
    assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
  }

  @Test
  void anOperatorForcesOneRouteOrAll() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion(PRIMARY_TEXT)));
    stubAzure(AZURE_TEXT);

    assertThat(setBreaker("{\"state\":\"open\",\"route\":\"primary\"}").statusCode()).isEqualTo(200);
    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).headers().firstValue("x-spillway-route"))
        .hasValue("azure-eu");

    JsonNode all = json(setBreaker("{\"state\":\"open\"}"));
    assertThat(all.get("routes").findValuesAsText("override")).containsExactly("open", "open");
    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).headers().firstValue("x-spillway-backend"))
        .hasValue("local");

    setBreaker("{\"state\":\"closed\"}");
    assertThat(chat(GatewayHarness.GOLD_KEY, "gpt-4o", false).headers().firstValue("x-spillway-route"))
        .hasValue("primary");

    HttpResponse<String> unknown = setBreaker("{\"state\":\"open\",\"route\":\"nowhere\"}");
    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(json(unknown).at("/error/param").asText()).isEqualTo("route");
    assertThat(json(unknown).at("/error/message").asText()).contains("primary, azure-eu");
  }

  @Test
  void statusListsEveryRouteWithItsBreaker() {
    HttpResponse<String> status = h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/status")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).GET().build());

    JsonNode routes = json(status).get("routes");
    assertThat(routes.findValuesAsText("name")).containsExactly("primary", "azure-eu");
    assertThat(routes.findValuesAsText("kind")).containsExactly("openai", "azure");
    assertThat(routes.get(1).get("breaker").get("state").asText()).isEqualTo("closed");
    assertThat(status.body()).doesNotContain(AZURE_KEY).doesNotContain(PRIMARY_KEY);
  }

  @Test
  void anAzureRoutesKeyIsRedactedFromWhatClientsSee() {
    primary.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
    azure.stubFor(post(urlPathEqualTo(AZURE_CHAT)).willReturn(OpenAiStubs.json(400,
        "{\"error\":{\"message\":\"Bad request for key " + AZURE_KEY + "\",\"type\":\"invalid_request_error\","
            + "\"param\":null,\"code\":null}}")));

    HttpResponse<String> response = chat(GatewayHarness.GOLD_KEY, "gpt-4o", false);

    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(response.headers().firstValue("x-spillway-route")).hasValue("azure-eu");
    assertThat(response.body()).doesNotContain(AZURE_KEY).contains("Bad request for key");
  }

  private HttpResponse<String> chat(String key, String model, boolean stream) {
    return h.post("/v1/chat/completions", key, GatewayHarness.chatBody(model, "Write a haiku about rivers", stream));
  }

  private void stubAzure(String text) {
    stubChat(azure, () -> post(urlPathEqualTo(AZURE_CHAT)).withQueryParam("api-version", equalTo(API_VERSION))
        .withHeader("api-key", equalTo(AZURE_KEY)), text);
  }

  private void stubLocal(String text) {
    stubChat(h.ollama, () -> post(urlPathEqualTo("/v1/chat/completions")), text);
  }

  /** Streamed requests get a stream, others a completion. */
  private static void stubChat(WireMockServer server, Supplier<MappingBuilder> request, String text) {
    ResponseDefinitionBuilder stream = OpenAiStubs.chatStream(false, text.split("(?<= )"));
    server.stubFor(request.get().atPriority(1).withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
        .willReturn(stream));
    server.stubFor(request.get().atPriority(5).willReturn(OpenAiStubs.chatCompletion(text)));
  }

  /** The answer's text: a completion's message, or a stream's deltas joined. */
  private static String text(HttpResponse<String> response, boolean stream) {
    if (!stream) {
      return json(response).at("/choices/0/message/content").asText();
    }
    StringBuilder text = new StringBuilder();
    for (String line : response.body().split("\n")) {
      if (line.startsWith("data: ") && !line.equals("data: [DONE]")) {
        try {
          text.append(Json.parse(line.substring(6)).at("/choices/0/delta/content").asText(""));
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    }
    return text.toString();
  }

  private JsonNode breaker() {
    return json(h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).GET().build()));
  }

  private HttpResponse<String> setBreaker(String body) {
    return h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build());
  }

  private static JsonNode json(HttpResponse<String> response) {
    try {
      return Json.parse(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException("not JSON: " + response.body(), e);
    }
  }
}
