package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.routing.breaker.Breaker;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two real gateways, a CI sidecar in front of the shared gateway: a client that forges {@code Via}
 * gets 508 {@code loop_detected} from the shared gateway, and the sidecar passes it on as final. It
 * is not tried on the sidecar's local backend, it does not count toward the sidecar's breaker, and
 * as a half-open probe's answer it neither reopens nor closes the breaker, so one such client cannot
 * keep everyone else off the cloud.
 */
class LoopRefusalIsFinalTest {
  private static final String CHAT = "/v1/chat/completions";
  private static final String FORGED_VIA = "1.1 spillway";

  private GatewayHarness shared;
  private GatewayHarness sidecar;

  @BeforeEach
  void start() {
    shared = GatewayHarness.start();
    shared.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("from the cloud")));
    sidecar = GatewayHarness.start("cloud:\n  baseUrl: " + shared.baseUrl() + "\n  apiKey: " + GatewayHarness.GOLD_KEY
        + "\nfailover:\n  capacityStreak: 1\n");
    sidecar.ollama.stubFor(post("/api/chat").willReturn(okJson("""
        {"model":"qwen2.5-coder:7b","created_at":"2026-11-10T10:00:00Z",
         "message":{"role":"assistant","content":"served locally"},
         "done":true,"done_reason":"stop","prompt_eval_count":5,"eval_count":2}""")));
  }

  @AfterEach
  void stop() {
    sidecar.close();
    shared.close();
  }

  private HttpResponse<String> chat(String key, String... headers) {
    return sidecar.post(CHAT, key, GatewayHarness.chatBody("gpt-4o", "hello", false), headers);
  }

  private static void assertLoopDetected(HttpResponse<String> response) throws Exception {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(508);
    JsonNode error = Json.parse(response.body()).get("error");
    assertThat(error.get("code").asText()).isEqualTo("loop_detected");
  }

  private Breaker.State sidecarBreaker() {
    return sidecar.gateway().breaker().status().state();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void aForgedViaGets508ThatIsNeitherRetriedOnLocalNorCountedByTheBreaker(String key) throws Exception {
    for (int i = 0; i < 3; i++) {
      assertLoopDetected(chat(key, "Via", FORGED_VIA));
    }

    sidecar.ollama.verify(0, postRequestedFor(urlEqualTo("/api/chat")));
    assertThat(sidecarBreaker()).isEqualTo(Breaker.State.CLOSED);
    assertThat(sidecar.gateway().breaker().status().streak()).isZero();
    HttpResponse<String> normal = chat(key);
    assertThat(normal.statusCode()).as(normal.body()).isEqualTo(200);
    assertThat(normal.headers().firstValue("x-spillway-backend")).hasValue("cloud");
    assertThat(normal.body()).contains("from the cloud");
  }

  @Test
  void aLoopRefusalAnsweringTheHalfOpenProbeLeavesTheBreakerToTheNextRealAnswer() throws Exception {
    shared.cloud.resetAll();
    shared.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.atCapacity()));
    HttpResponse<String> atCapacity = chat(GatewayHarness.GOLD_KEY);
    assertThat(atCapacity.headers().firstValue("x-spillway-backend")).as(atCapacity.body()).hasValue("local");
    assertThat(sidecarBreaker()).isEqualTo(Breaker.State.OPEN);

    shared.cloud.resetAll();
    shared.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("from the cloud")));
    sidecar.clock.advance(Duration.ofHours(2)); // past the open period: the next request is the probe
    int localCalls = sidecar.ollama.findAll(postRequestedFor(urlEqualTo("/api/chat"))).size();

    assertLoopDetected(chat(GatewayHarness.GOLD_KEY, "Via", FORGED_VIA));
    sidecar.ollama.verify(localCalls, postRequestedFor(urlEqualTo("/api/chat")));
    assertThat(sidecarBreaker()).isNotEqualTo(Breaker.State.OPEN);

    HttpResponse<String> normal = chat(GatewayHarness.SILVER_KEY);
    assertThat(normal.statusCode()).as(normal.body()).isEqualTo(200);
    assertThat(normal.headers().firstValue("x-spillway-backend")).hasValue("cloud");
    assertThat(sidecarBreaker()).isEqualTo(Breaker.State.CLOSED);
  }
}
