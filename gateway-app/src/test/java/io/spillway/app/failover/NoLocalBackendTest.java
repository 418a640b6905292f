package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.json;
import static io.spillway.app.failover.FailoverFixtures.stubChat;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code local.enabled: false} (a CI sidecar without a GPU): a capacity answer says there is no local
 * backend in its header, body and log lines, the breaker opening changes nothing for the client, and
 * {@code Retry-After} is the cloud's own hint, never {@code failover.localFor}. For every tier.
 */
class NoLocalBackendTest {
  private static final String NO_LOCAL = "local:\n  enabled: false\nfailover:\n  localFor: 5m\n";

  @ParameterizedTest(name = "{0}")
  @CsvSource({"gold, sk-gold-team-key", "silver, sk-silver-team-key", "bronze, sk-bronze-team-key"})
  void aCapacityAnswerSaysThereIsNoLocalBackendAndKeepsTheCloudsRetryAfterPastTheBreakerOpening(
      String tier, String key) {
    try (LogCapture logs = new LogCapture(); GatewayHarness h = GatewayHarness.start(NO_LOCAL)) {
      stubChat(h.cloud, OpenAiStubs.atCapacity().withHeader("Retry-After", "2"));
      String body = GatewayHarness.chatBody("gpt-4o", "hi from " + tier, false);

      for (int i = 0; i < 6; i++) {
        HttpResponse<String> response = h.post("/v1/chat/completions", key, body);

        assertThat(response.statusCode()).as("answer %d", i).isEqualTo(503);
        assertThat(response.headers().firstValue("x-spillway-backend")).as("answer %d", i).hasValue("cloud");
        assertThat(response.headers().firstValue("retry-after")).as("answer %d: the cloud's hint", i).hasValue("2");
        assertThat(json(response).path("error").path("message").asText()).contains("no local backend")
            .contains("local.enabled: false").contains("Retry after 2s");
      }

      assertThat(breaker(h).path("state").asText()).as("three capacity answers opened it").isEqualTo("open");
      h.cloud.verify(6, postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(logs.lines()).noneMatch(line -> line.contains("retrying on the local backend"))
          .noneMatch(line -> line.contains("trying the next route or local"))
          .anyMatch(line -> line.contains("there is no local backend to retry on (local.enabled: false)"));
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"gold, sk-gold-team-key", "silver, sk-silver-team-key", "bronze, sk-bronze-team-key"})
  void aCapacityAnswerWithoutAHintGetsOneSecondNotLocalFor(String tier, String key) {
    try (GatewayHarness h = GatewayHarness.start(NO_LOCAL)) {
      stubChat(h.cloud, OpenAiStubs.atCapacity());
      String body = GatewayHarness.chatBody("gpt-4o", "hi from " + tier, true);

      for (int i = 0; i < 5; i++) {
        HttpResponse<String> response = h.post("/v1/chat/completions", key, body);

        assertThat(response.statusCode()).isEqualTo(503);
        assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
        assertThat(response.headers().firstValue("retry-after")).as("answer %d", i).hasValue("1");
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"gold, sk-gold-team-key", "silver, sk-silver-team-key", "bronze, sk-bronze-team-key"})
  void theCloudStillServesOnceItRecoversEvenWhileTheBreakerIsOpen(String tier, String key) {
    try (GatewayHarness h = GatewayHarness.start(NO_LOCAL)) {
      stubChat(h.cloud, OpenAiStubs.atCapacity().withHeader("Retry-After", "1"));
      String body = GatewayHarness.chatBody("gpt-4o", "hi from " + tier, false);
      for (int i = 0; i < 3; i++) {
        h.post("/v1/chat/completions", key, body);
      }
      assertThat(breaker(h).path("state").asText()).isEqualTo("open");
      h.cloud.resetAll();
      stubChat(h.cloud, "the cloud is back");

      HttpResponse<String> response = h.post("/v1/chat/completions", key, body);

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(response.body()).contains("the cloud is back");
    }
  }
}
