package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.BRONZE_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.quota.accounting.TokenEstimator;
import io.spillway.redis.testing.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Two gateway replicas on one real Redis: one ledger, one limit per pool, nothing lost on a restart. */
class SharedRedisQuotaTest {
  private static final int MAX_TOKENS = 100;
  private static final String REQUEST =
      "{\"model\":\"gpt-4o\",\"max_tokens\":" + MAX_TOKENS + ",\"messages\":[{\"role\":\"user\",\"content\":\"Summarise the build log\"}]}";

  @TempDir Path dir;

  /**
   * Shaping is off: past the soft band it would lower the requests' {@code max_tokens}, and with it
   * the estimate this test counts on.
   */
  private static String redisConfig(RedisServer redis) {
    return """
        quota: {monthlyTokens: 10000, flushInterval: 100ms, storeTimeout: 2s}
        shaping: {degrade: never}
        store: %s
        """.formatted(redis.uri());
  }

  private static JsonNode report(GatewayHarness harness) {
    try {
      return Json.parse(harness.get("/admin/quota", ADMIN_TOKEN).body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** What the gateway reserves for {@link #REQUEST}; the stub reports exactly that as used. */
  private static long estimate() throws IOException {
    GatewayRequest request = GatewayRequest.create("r", Route.CHAT_COMPLETIONS, Headers.EMPTY,
        (ObjectNode) Json.parse(REQUEST), null, Instant.EPOCH);
    return new TokenEstimator(1024).estimate(request).total();
  }

  @Test
  void twoGatewaysSharingOneRedisNeverAdmitMoreThanOnePoolsLimitTogether() throws Exception {
    long perRequest = estimate();
    long bronzeLimit = 3_000;
    long fits = bronzeLimit / perRequest;
    try (RedisServer redis = RedisServer.start(dir);
        GatewayHarness a = GatewayHarness.start(redisConfig(redis));
        GatewayHarness b = GatewayHarness.start(redisConfig(redis))) {
      for (GatewayHarness h : List.of(a, b)) {
        h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(200,
            OpenAiStubs.chatCompletionBody("ok", (int) (perRequest - MAX_TOKENS), MAX_TOKENS))));
      }

      int requests = (int) fits * 3;
      List<Future<HttpResponse<String>>> answers = new ArrayList<>();
      try (ExecutorService clients = Executors.newFixedThreadPool(16)) {
        for (int i = 0; i < requests; i++) {
          GatewayHarness replica = i % 2 == 0 ? a : b;
          answers.add(clients.submit(() -> replica.post("/v1/chat/completions", BRONZE_KEY, REQUEST)));
        }
      }
      int served = 0;
      int refused = 0;
      for (Future<HttpResponse<String>> answer : answers) {
        HttpResponse<String> response = answer.get();
        if (response.statusCode() == 200) {
          served++;
        } else {
          assertThat(response.statusCode()).isEqualTo(429);
          assertThat(Json.parse(response.body()).at("/error/code").asText()).isEqualTo("insufficient_quota");
          refused++;
        }
      }

      assertThat(served).isEqualTo(fits);
      assertThat(refused).isEqualTo(requests - fits);
      JsonNode pool = report(a).at("/pools/bronze");
      assertThat(pool.get("used").asLong()).isEqualTo(fits * perRequest).isLessThanOrEqualTo(bronzeLimit);
      assertThat(pool.get("reserved").asLong()).isZero();
      assertThat(report(b).at("/pools/bronze/used").asLong()).isEqualTo(fits * perRequest);
    }
  }

  @Test
  void aRedisRestartMidTestLosesNoSettledUsage() {
    try (RedisServer redis = RedisServer.start(dir);
        GatewayHarness gateway = GatewayHarness.start(redisConfig(redis))) {
      gateway.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
      for (int i = 0; i < 3; i++) {
        assertThat(gateway.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false)).statusCode())
            .isEqualTo(200);
      }

      redis.stop();
      HttpResponse<String> duringOutage = gateway.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false));
      assertThat(duringOutage.statusCode()).as("served on local accounting").isEqualTo(200);
      assertThat(report(gateway).at("/store/healthy").asBoolean()).isFalse();
      redis.restart();
      await("the replica writes back what it counted while Redis was away")
          .atMost(Duration.ofSeconds(30))
          .until(() -> {
            JsonNode store = report(gateway).get("store");
            return store.get("healthy").asBoolean() && store.get("pendingSettlements").asInt() == 0;
          });
      gateway.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false));

      try (GatewayHarness fresh = GatewayHarness.start(redisConfig(redis))) {
        JsonNode report = report(fresh);
        assertThat(report.at("/pools/silver/used").asLong()).isEqualTo(5 * 19);
        assertThat(report.at("/teams/web/used").asLong()).isEqualTo(5 * 19);
      }
    }
  }
}
