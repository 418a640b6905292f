package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.AdmissionGate;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.quota.admission.PriorityAdmissionGate;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The waiting area through the real gateway: what a client sees when the cloud is at its
 * concurrency limit. The test itself holds the one place, so nothing depends on timing.
 */
class AdmissionGatewayTest {
  static final String CHAT = "/v1/chat/completions";

  GatewayHarness harness;
  PriorityAdmissionGate gate;

  @BeforeEach
  void start() {
    harness = GatewayHarness.start("""
        quota:
          admission: { cloudConcurrency: 1, queueSize: 1 }
        """);
    harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("hello")));
    gate = harness.gateway().admission();
  }

  @AfterEach
  void stop() {
    harness.close();
  }

  @Test
  void requestBeyondTheLimitWaitsForAPlaceThenIsServed() throws Exception {
    AdmissionGate.Permit held = holdTheOnlyPlace();
    CompletableFuture<HttpResponse<String>> waiting = chatInBackground(GatewayHarness.SILVER_KEY);
    await().atMost(Duration.ofSeconds(10)).until(() -> gate.waiting(BackendKind.CLOUD) == 1);
    assertThat(waiting).isNotDone();

    held.close();

    assertThat(waiting.get().statusCode()).isEqualTo(200);
  }

  @Test
  void fullWaitingAreaAnswers503WithRetryAfterAtOnce() throws Exception {
    AdmissionGate.Permit held = holdTheOnlyPlace();
    CompletableFuture<HttpResponse<String>> waiting = chatInBackground(GatewayHarness.SILVER_KEY);
    await().atMost(Duration.ofSeconds(10)).until(() -> gate.waiting(BackendKind.CLOUD) == 1);

    HttpResponse<String> refused = chat(GatewayHarness.BRONZE_KEY);

    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.headers().firstValue("retry-after")).hasValue("1");
    assertThat(refused.headers().firstValue("x-ratelimit-remaining-requests")).hasValue("199");
    assertThat(Json.parse(refused.body()).get("error").get("code").asText()).isEqualTo("queue_full");
    held.close();
    assertThat(waiting.get().statusCode()).isEqualTo(200);
  }

  @Test
  void requestWaitingPastItsMaxWaitGets429QueueTimeoutWithRetryAfter() throws Exception {
    AdmissionGate.Permit held = holdTheOnlyPlace();
    CompletableFuture<HttpResponse<String>> waiting = chatInBackground(GatewayHarness.BRONZE_KEY);
    await().atMost(Duration.ofSeconds(10)).until(() -> gate.waiting(BackendKind.CLOUD) == 1);

    harness.clock.advance(harness.gateway().config().quota().tier(Tier.BRONZE).maxWait());
    gate.wakeOverdue();

    HttpResponse<String> late = waiting.get();
    assertThat(late.statusCode()).isEqualTo(429);
    assertThat(late.headers().firstValue("retry-after")).isPresent();
    assertThat(Json.parse(late.body()).get("error").get("code").asText()).isEqualTo("queue_timeout");
    held.close();
  }

  private AdmissionGate.Permit holdTheOnlyPlace() {
    GatewayRequest holder = GatewayRequest.create("holder", Route.CHAT_COMPLETIONS, Headers.EMPTY, Json.object(),
        null, harness.clock.instant());
    holder.setAttribute(RequestAttributes.CALLER, new Caller("release", Tier.GOLD, "test"));
    return gate.enter(BackendKind.CLOUD, holder);
  }

  private CompletableFuture<HttpResponse<String>> chatInBackground(String key) {
    return CompletableFuture.supplyAsync(() -> chat(key), command -> Thread.ofVirtual().start(command));
  }

  private HttpResponse<String> chat(String key) {
    return harness.post(CHAT, key, GatewayHarness.chatBody("gpt-4o", "hi", false));
  }
}
