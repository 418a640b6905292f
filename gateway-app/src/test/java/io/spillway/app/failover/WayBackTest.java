package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.FailoverFixtures.CLOUD_TEXT;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_OPENAI;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_TEXT;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.stubChat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.ScriptedUpstream;
import java.io.OutputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The way back to the cloud after {@code failover.localFor}, for traffic of any tier. Silver and
 * bronze requests are shaped under breaker pressure (their ladder reaches the {@code local} step by
 * default); that preference must never keep the half-open probe from going out, or a team with only
 * silver or bronze keys would stay local until a gold request came along.
 */
class WayBackTest {
  private static final String BODY = GatewayHarness.chatBody("gpt-4o", "Write a haiku about rivers", false);
  private static final String STREAMED_BODY = GatewayHarness.chatBody("gpt-4o", "Write a haiku about rivers", true);

  static Stream<Arguments> tiers() {
    return Stream.of(
        Arguments.of("gold", GatewayHarness.GOLD_KEY),
        Arguments.of("silver", GatewayHarness.SILVER_KEY),
        Arguments.of("bronze", GatewayHarness.BRONZE_KEY));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("tiers")
  void afterLocalForTrafficOfOneTierAloneBringsTheCloudBack(String tier, String key) {
    try (GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI)) {
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      stubChat(h.ollama, LOCAL_TEXT);
      for (int i = 0; i < 3; i++) {
        assertThat(h.post("/v1/chat/completions", key, BODY).headers().firstValue("x-spillway-backend"))
            .hasValue("local");
      }
      assertThat(breaker(h).get("state").asText()).isEqualTo("open");
      HttpResponse<String> whileOpen = h.post("/v1/chat/completions", key, BODY);
      assertThat(whileOpen.headers().firstValue("x-spillway-backend")).hasValue("local");
      if (!tier.equals("gold")) {
        assertThat(whileOpen.headers().firstValue("x-spillway-degraded")).as("shaped toward local while open")
            .hasValueSatisfying(steps -> assertThat(steps).contains("local"));
      }

      h.clock.advance(Duration.ofMinutes(5));
      h.cloud.resetAll();
      stubChat(h.cloud, CLOUD_TEXT);
      HttpResponse<String> probe = h.post("/v1/chat/completions", key, BODY);

      assertThat(probe.statusCode()).isEqualTo(200);
      assertThat(probe.headers().firstValue("x-spillway-backend")).as("the %s request is the probe", tier)
          .hasValue("cloud");
      assertThat(probe.body()).contains(CLOUD_TEXT);
      assertThat(probe.headers().firstValue("x-spillway-degraded").orElse(""))
          .as("the local step did not apply, so it is not reported").doesNotContain("local");
      assertThat(breaker(h).get("state").asText()).isEqualTo("closed");

      HttpResponse<String> after = h.post("/v1/chat/completions", key, STREAMED_BODY);
      assertThat(after.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(after.headers().firstValue("x-spillway-degraded")).as("no pressure left").isEmpty();
      h.cloud.verify(2, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }

  @Test
  void whileTheProbeIsOutEveryOtherRequestOfEveryTierStaysLocal() throws Exception {
    CountDownLatch releaseProbe = new CountDownLatch(1);
    AtomicInteger cloudCalls = new AtomicInteger();
    try (ScriptedUpstream cloud = new ScriptedUpstream((head, out) -> {
          if (cloudCalls.incrementAndGet() <= 3) {
            writeJson(out, "503 Service Unavailable", "{\"error\":{\"message\":\"Selected model is at capacity. "
                + "Please try a different model.\",\"type\":\"server_error\",\"param\":null,\"code\":null}}");
          } else {
            ScriptedUpstream.await(releaseProbe);
            writeJson(out, "200 OK", OpenAiStubs.chatCompletionBody(CLOUD_TEXT, 12, 7));
          }
        });
        GatewayHarness h = GatewayHarness.start(LOCAL_OPENAI + "cloud:\n  baseUrl: " + cloud.baseUrl() + "\n")) {
      stubChat(h.ollama, LOCAL_TEXT);
      for (int i = 0; i < 3; i++) {
        h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, BODY);
      }
      assertThat(breaker(h).get("state").asText()).isEqualTo("open");
      h.clock.advance(Duration.ofMinutes(5));

      CompletableFuture<HttpResponse<String>> probe = CompletableFuture.supplyAsync(
          () -> h.post("/v1/chat/completions", GatewayHarness.BRONZE_KEY, BODY));
      await().atMost(Duration.ofSeconds(10)).until(() -> breaker(h).get("probeInFlight").asBoolean());

      for (String key : List.of(GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY, GatewayHarness.GOLD_KEY)) {
        for (String body : List.of(BODY, STREAMED_BODY)) {
          HttpResponse<String> response = h.post("/v1/chat/completions", key, body);
          assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
          assertThat(response.body()).contains("Served");
        }
      }
      assertThat(cloudCalls).as("three capacity answers and exactly one probe").hasValue(4);
      assertThat(breaker(h).get("state").asText()).isEqualTo("half_open");

      releaseProbe.countDown();
      HttpResponse<String> probed = probe.get(20, TimeUnit.SECONDS);
      assertThat(probed.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(probed.body()).contains(CLOUD_TEXT);
      assertThat(breaker(h).get("state").asText()).isEqualTo("closed");
      h.ollama.verify(3 + 6, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }

  private static void writeJson(OutputStream out, String status, String body) throws java.io.IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    out.write(("HTTP/1.1 " + status + "\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length
        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
    out.write(bytes);
    out.flush();
  }
}
