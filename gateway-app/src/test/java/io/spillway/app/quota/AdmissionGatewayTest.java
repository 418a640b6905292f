package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** The waiting area through the real gateway: what a client sees when a backend is at its limit. */
class AdmissionGatewayTest {
  static final String CHAT = "/v1/chat/completions";

  @Test
  void fullWaitingAreaAnswers503WithRetryAfterAtOnce() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("""
        quota:
          admission: { cloudConcurrency: 1, queueSize: 0 }
        """)) {
      harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("slow").withFixedDelay(1500)));
      CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(
          () -> harness.post(CHAT, GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "hi", false)),
          command -> Thread.ofVirtual().start(command));
      await().atMost(Duration.ofSeconds(5))
          .until(() -> harness.gateway().admission().snapshot().get("cloud").get("inFlight").asInt() == 1);

      HttpResponse<String> refused =
          harness.post(CHAT, GatewayHarness.BRONZE_KEY, GatewayHarness.chatBody("gpt-4o", "hi", false));

      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(refused.headers().firstValue("retry-after")).hasValue("1");
      assertThat(refused.headers().firstValue("x-ratelimit-remaining-requests")).hasValue("199");
      assertThat(Json.parse(refused.body()).get("error").get("code").asText()).isEqualTo("queue_full");
      assertThat(first.get().statusCode()).isEqualTo(200);
    }
  }
}
