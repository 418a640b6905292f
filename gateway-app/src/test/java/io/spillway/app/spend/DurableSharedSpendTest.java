package io.spillway.app.spend;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.BRONZE_KEY;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.redis.testing.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Spend lives in the usage store: it survives a restart on the embedded store, and gateways sharing
 * one real {@code redis-server} show one figure per team and enforce (and announce) a money budget
 * together, whichever replica served the requests.
 */
class DurableSharedSpendTest {
  /** Each answer: 10 000 prompt tokens (none cached) and 1 000 completion tokens of gpt-4o = 0.035 USD. */
  private static final double COST = (10_000 * 2.50 + 1_000 * 10.00) / 1_000_000;
  private static final String ANSWER = OpenAiStubs.chatCompletionBody("Done", 10_000, 1_000);

  @TempDir Path dir;
  private WireMockServer webhook;

  record Caller(String key, String team, String tier) {}

  static List<Caller> callers() {
    return List.of(new Caller(GOLD_KEY, "release", "gold"), new Caller(SILVER_KEY, "web", "silver"),
        new Caller(BRONZE_KEY, "sandbox", "bronze"));
  }

  @BeforeEach
  void startWebhook() {
    webhook = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    webhook.start();
    webhook.stubFor(post("/alerts").willReturn(aResponse().withStatus(204)));
  }

  @AfterEach
  void stopWebhook() {
    webhook.stop();
  }

  private String config(String store, String extra) {
    return """
        quota: {monthlyTokens: 100000000, flushInterval: 100ms, storeTimeout: 2s, alertWebhook: "%s/alerts"}
        shaping: {degrade: never}
        store: %s
        """.formatted(webhook.baseUrl(), store) + extra;
  }

  private static GatewayHarness gateway(String config) {
    GatewayHarness h = GatewayHarness.start(config);
    h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(200, ANSWER)));
    return h;
  }

  private static HttpResponse<String> ask(GatewayHarness h, Caller caller) {
    return h.post("/v1/chat/completions", caller.key(), chatBody("gpt-4o", "Review this diff", false));
  }

  private static JsonNode spend(GatewayHarness h) {
    try {
      HttpResponse<String> report = h.get("/admin/quota", ADMIN_TOKEN);
      assertThat(report.statusCode()).isEqualTo(200);
      return Json.parse(report.body()).get("spend");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static double monthGauge(GatewayHarness h, String tier) {
    for (String line : h.get("/metrics", null).body().split("\n")) {
      if (line.startsWith("spillway_spend_month_usd{") && line.contains("tier=\"" + tier + "\"")) {
        return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    throw new AssertionError("no spillway_spend_month_usd for tier " + tier);
  }

  private List<String> bandsPosted(String team) {
    return webhook.findAll(postRequestedFor(urlEqualTo("/alerts"))).stream()
        .map(LoggedRequest::getBodyAsString)
        .map(body -> {
          try {
            return Json.parse(body);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        })
        .filter(alert -> "spillway.spend.band".equals(alert.path("type").asText())
            && team.equals(alert.path("team").asText()))
        .map(alert -> alert.path("band").asText())
        .toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("callers")
  void spendAndAReachedBudgetSurviveAGatewayRestartOnTheEmbeddedStore(Caller caller) {
    String config = config("embedded:" + dir.resolve("data"),
        "spend: {teams: {" + caller.team() + ": {monthlyUsd: 0.06}}}");
    try (GatewayHarness first = gateway(config)) {
      assertThat(ask(first, caller).statusCode()).isEqualTo(200);
      assertThat(ask(first, caller).statusCode()).isEqualTo(200);
      assertThat(spend(first).at("/teams/" + caller.team() + "/band").asText()).isEqualTo("hard");
      await().atMost(Duration.ofSeconds(5)).until(() -> bandsPosted(caller.team()).size() == 3);
    }

    try (GatewayHarness second = gateway(config)) {
      JsonNode spend = spend(second);
      assertThat(spend.get("store").asText()).isEqualTo("embedded");
      assertThat(spend.at("/teams/" + caller.team() + "/usd").asDouble()).isCloseTo(2 * COST, within(1e-12));
      assertThat(spend.at("/teams/" + caller.team() + "/byTier/" + caller.tier()).asDouble())
          .isCloseTo(2 * COST, within(1e-12));
      assertThat(spend.at("/tiers/" + caller.tier() + "/usd").asDouble()).isCloseTo(2 * COST, within(1e-12));
      assertThat(monthGauge(second, caller.tier())).isCloseTo(2 * COST, within(1e-12));

      HttpResponse<String> refused = ask(second, caller);
      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(refused.body()).contains("insufficient_quota", "money budget");
      assertThat(second.cloud.getAllServeEvents()).as("refused before the cloud").isEmpty();
    }
    assertThat(bandsPosted(caller.team())).as("each band once")
        .containsExactlyInAnyOrder("alert", "soft", "hard");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("callers")
  void twoGatewaysOnOneRedisShowTheSameTeamSpendForRequestsSplitBetweenThem(Caller caller) {
    try (RedisServer redis = RedisServer.start(dir.resolve("redis"));
        GatewayHarness a = gateway(config(redis.uri(), ""));
        GatewayHarness b = gateway(config(redis.uri(), ""))) {
      for (int i = 0; i < 5; i++) {
        assertThat(ask(i % 2 == 0 ? a : b, caller).statusCode()).isEqualTo(200);
      }

      for (GatewayHarness replica : List.of(a, b)) {
        JsonNode spend = spend(replica);
        assertThat(spend.get("store").asText()).isEqualTo("redis");
        assertThat(spend.at("/teams/" + caller.team() + "/usd").asDouble()).isCloseTo(5 * COST, within(1e-12));
        assertThat(spend.at("/teams/" + caller.team() + "/byTier/" + caller.tier()).asDouble())
            .isCloseTo(5 * COST, within(1e-12));
        assertThat(spend.get("usd").asDouble()).isCloseTo(5 * COST, within(1e-12));
        assertThat(monthGauge(replica, caller.tier())).isCloseTo(5 * COST, within(1e-12));
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("callers")
  void aMoneyBudgetCrossedOnOneReplicaIsEnforcedOnTheOtherAndEachBandAnnouncedOnce(Caller caller) {
    // 0.035 of 0.042 is 83 %: the alert band, on replica a; 0.07 is past 100 %: soft and hard, on b.
    String budget = "spend: {teams: {" + caller.team() + ": {monthlyUsd: 0.042}}}";
    try (RedisServer redis = RedisServer.start(dir.resolve("redis"));
        GatewayHarness a = gateway(config(redis.uri(), budget));
        GatewayHarness b = gateway(config(redis.uri(), budget))) {
      assertThat(ask(a, caller).statusCode()).isEqualTo(200);
      await().atMost(Duration.ofSeconds(5)).until(() -> bandsPosted(caller.team()).size() == 1);
      assertThat(spend(b).at("/teams/" + caller.team() + "/band").asText()).isEqualTo("alert");

      assertThat(ask(b, caller).statusCode()).isEqualTo(200);
      HttpResponse<String> refusedOnA = ask(a, caller);
      HttpResponse<String> refusedOnB = ask(b, caller);

      assertThat(refusedOnA.statusCode()).isEqualTo(429);
      assertThat(refusedOnB.statusCode()).isEqualTo(429);
      assertThat(refusedOnA.body()).contains("insufficient_quota", caller.team(), "money budget");
      assertThat(spend(a).at("/teams/" + caller.team() + "/band").asText()).isEqualTo("hard");
      await().atMost(Duration.ofSeconds(5)).until(() -> bandsPosted(caller.team()).size() >= 3);
      assertThat(bandsPosted(caller.team())).as("the fleet announces each band once")
          .containsExactlyInAnyOrder("alert", "soft", "hard");
    }
  }
}
