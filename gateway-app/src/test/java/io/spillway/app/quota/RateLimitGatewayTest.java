package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.errors.RateLimitException;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Request rate limits through the real gateway, seen by raw HTTP and by the OpenAI Java SDK. */
class RateLimitGatewayTest {
  static final String SECOND_SILVER_KEY = "sk-silver-mobile-key";
  static final String CHAT = "/v1/chat/completions";

  GatewayHarness harness;

  @BeforeEach
  void start() {
    harness = GatewayHarness.start("""
        keys:
          - { key: %s, team: release, tier: gold }
          - { key: %s, team: web, tier: silver }
          - { key: %s, team: mobile, tier: silver }
          - { key: %s, team: sandbox, tier: bronze }
        quota:
          tiers:
            silver: { requestsPerMinutePerTeam: 2 }
            bronze: { requestsPerHour: 3 }
        """.formatted(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, SECOND_SILVER_KEY,
        GatewayHarness.BRONZE_KEY));
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("hello")));
  }

  @AfterEach
  void stop() {
    harness.close();
  }

  @Test
  void bronzeKeyOverItsHourlyLimitGets429WithRetryAfterAndHeadersWhileGoldPasses() throws Exception {
    for (int i = 1; i <= 3; i++) {
      HttpResponse<String> ok = chat(GatewayHarness.BRONZE_KEY, false);
      assertThat(ok.statusCode()).isEqualTo(200);
      assertThat(header(ok, "x-ratelimit-limit-requests")).isEqualTo("3");
      assertThat(header(ok, "x-ratelimit-remaining-requests")).isEqualTo(Integer.toString(3 - i));
    }

    HttpResponse<String> refused = chat(GatewayHarness.BRONZE_KEY, false);

    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(header(refused, "retry-after")).as("one request every 3600s/3").isEqualTo("1200");
    assertThat(header(refused, "x-ratelimit-limit-requests")).isEqualTo("3");
    assertThat(header(refused, "x-ratelimit-remaining-requests")).isEqualTo("0");
    assertThat(header(refused, "x-ratelimit-reset-requests")).isEqualTo("1h0m0s");
    assertThat(header(refused, "x-request-id")).isNotBlank();
    JsonNode error = Json.parse(refused.body()).get("error");
    assertThat(error.get("code").asText()).isEqualTo("rate_limit_exceeded");
    assertThat(error.get("type").asText()).isEqualTo("requests");
    assertThat(error.get("message").asText()).contains("the bronze tier", "Limit 3");
    harness.cloud.verify(3, postRequestedFor(urlEqualTo(CHAT)));

    HttpResponse<String> gold = chat(GatewayHarness.GOLD_KEY, false);
    assertThat(gold.statusCode()).isEqualTo(200);
    assertThat(gold.headers().firstValue("x-ratelimit-limit-requests")).as("gold has no request limit").isEmpty();
    assertThat(gold.headers().firstValue("x-ratelimit-remaining-requests")).isEmpty();
  }

  @Test
  void openAiSdkSeesRateLimitExceptionWithTheHeaders() {
    var client = harness.openAi(GatewayHarness.BRONZE_KEY);
    var params = ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O_MINI).addUserMessage("hi").build();
    for (int i = 0; i < 3; i++) {
      ChatCompletion completion = client.chat().completions().create(params);
      assertThat(completion.choices().get(0).message().content()).contains("hello");
    }

    assertThatThrownBy(() -> client.chat().completions().create(params))
        .isInstanceOfSatisfying(RateLimitException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(429);
          assertThat(e.code()).contains("rate_limit_exceeded");
          assertThat(e.headers().values("retry-after")).containsExactly("1200");
          assertThat(e.headers().values("x-ratelimit-remaining-requests")).containsExactly("0");
          assertThat(e.headers().values("x-ratelimit-reset-requests")).containsExactly("1h0m0s");
        });
  }

  @Test
  void silverLimitsArePerTeam() {
    assertThat(chat(GatewayHarness.SILVER_KEY, false).statusCode()).isEqualTo(200);
    assertThat(chat(GatewayHarness.SILVER_KEY, false).statusCode()).isEqualTo(200);
    HttpResponse<String> refused = chat(GatewayHarness.SILVER_KEY, false);
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(header(refused, "retry-after")).as("one request every 60s/2").isEqualTo("30");

    HttpResponse<String> otherTeam = chat(SECOND_SILVER_KEY, false);
    assertThat(otherTeam.statusCode()).isEqualTo(200);
    assertThat(header(otherTeam, "x-ratelimit-remaining-requests")).isEqualTo("1");
  }

  @Test
  void limitsRefillWithTheClock() {
    for (int i = 0; i < 3; i++) {
      chat(GatewayHarness.BRONZE_KEY, false);
    }
    assertThat(chat(GatewayHarness.BRONZE_KEY, false).statusCode()).isEqualTo(429);

    harness.clock.advance(Duration.ofMinutes(19));
    HttpResponse<String> stillRefused = chat(GatewayHarness.BRONZE_KEY, false);
    assertThat(stillRefused.statusCode()).isEqualTo(429);
    assertThat(header(stillRefused, "retry-after")).isEqualTo("60");

    harness.clock.advance(Duration.ofMinutes(1));
    HttpResponse<String> refilled = chat(GatewayHarness.BRONZE_KEY, false);
    assertThat(refilled.statusCode()).isEqualTo(200);
    assertThat(header(refilled, "x-ratelimit-remaining-requests")).isEqualTo("0");
    assertThat(header(refilled, "x-ratelimit-reset-requests")).isEqualTo("1h0m0s");
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void everyAnswerCarriesTheRequestHeadersAndGivesBackItsAdmissionPlace(boolean stream) {
    harness.cloud.stubFor(post(CHAT).willReturn(
        stream ? OpenAiStubs.chatStream(false, "hel", "lo") : OpenAiStubs.chatCompletion("hello")));

    HttpResponse<String> answer = chat(GatewayHarness.SILVER_KEY, stream);

    assertThat(answer.statusCode()).isEqualTo(200);
    assertThat(header(answer, "x-ratelimit-limit-requests")).isEqualTo("2");
    assertThat(header(answer, "x-ratelimit-remaining-requests")).isEqualTo("1");
    assertThat(header(answer, "x-ratelimit-reset-requests")).isEqualTo("30s");
    awaitAdmissionPlacesGivenBack();
  }

  @Test
  void upstreamErrorsCarryTheRequestHeadersToo() {
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.insufficientQuota()));

    HttpResponse<String> answer = chat(GatewayHarness.SILVER_KEY, false);

    assertThat(answer.statusCode()).isEqualTo(429);
    assertThat(header(answer, "x-ratelimit-remaining-requests")).isEqualTo("1");
    awaitAdmissionPlacesGivenBack();
  }

  /** The stream's permit is given back when the gateway closes it, just after the client has it all. */
  private void awaitAdmissionPlacesGivenBack() {
    await().atMost(Duration.ofSeconds(5))
        .until(() -> harness.gateway().admission().snapshot().get("cloud").get("inFlight").asInt() == 0);
  }

  private HttpResponse<String> chat(String key, boolean stream) {
    return harness.post(CHAT, key, GatewayHarness.chatBody("gpt-4o-mini", "hi", stream));
  }

  private static String header(HttpResponse<String> response, String name) {
    return response.headers().firstValue(name).orElse(null);
  }
}
