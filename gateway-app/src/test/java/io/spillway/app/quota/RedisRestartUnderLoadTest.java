package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.redis.testing.RedisServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Redis (append-only, fsync on every write) restarted while traffic runs through the gateway:
 * afterwards the shared ledger holds exactly the usage of the requests that were answered 200.
 */
class RedisRestartUnderLoadTest {
  private static final int PROMPT_TOKENS = 11;
  private static final int COMPLETION_TOKENS = 5;
  private static final long PER_REQUEST = PROMPT_TOKENS + COMPLETION_TOKENS;
  private static final int CLIENTS = 8;

  @TempDir Path dir;

  private static JsonNode report(GatewayHarness harness) {
    try {
      return Json.parse(harness.get("/admin/quota", ADMIN_TOKEN).body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void redisRestartMidTrafficNeitherLosesNorDoubleCountsSettledUsage() throws Exception {
    restartMidTraffic(RedisServer::stop);
  }

  @Test
  void redisKilledNineMidTrafficNeitherLosesNorDoubleCountsSettledUsage() throws Exception {
    restartMidTraffic(RedisServer::crash);
  }

  private void restartMidTraffic(java.util.function.Consumer<RedisServer> takeDown) throws Exception {
    try (RedisServer redis = RedisServer.start(dir.resolve("redis"));
        GatewayHarness gateway = GatewayHarness.start("""
            quota: {monthlyTokens: 1000000000, flushInterval: 100ms, storeTimeout: 500ms}
            store: %s
            """.formatted(redis.uri()))) {
      gateway.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(200,
          OpenAiStubs.chatCompletionBody("ok", PROMPT_TOKENS, COMPLETION_TOKENS))));
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest request = HttpRequest.newBuilder(URI.create(gateway.url("/v1/chat/completions")))
          .timeout(Duration.ofSeconds(20))
          .header("Content-Type", "application/json")
          .header("Authorization", "Bearer " + GOLD_KEY)
          .POST(HttpRequest.BodyPublishers.ofString(chatBody("gpt-4o", "count me", false)))
          .build();
      AtomicBoolean running = new AtomicBoolean(true);
      AtomicInteger ok = new AtomicInteger();
      AtomicInteger other = new AtomicInteger();
      ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
      for (int i = 0; i < CLIENTS; i++) {
        clients.submit(() -> {
          while (running.get()) {
            try {
              HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
              (answer.statusCode() == 200 ? ok : other).incrementAndGet();
            } catch (IOException e) {
              other.incrementAndGet();
            } catch (InterruptedException e) {
              return;
            }
          }
        });
      }
      try {
        await("traffic flows on the shared ledger").atMost(Duration.ofSeconds(20)).until(() -> ok.get() >= 40);
        takeDown.accept(redis);
        int beforeStart = ok.get();
        await("traffic flows while Redis is down").atMost(Duration.ofSeconds(20))
            .untilAsserted(() -> assertThat(ok.get()).as("answered (%s not)", other).isGreaterThanOrEqualTo(beforeStart + 20));
        redis.startAgain();
        int afterStart = ok.get();
        await("traffic flows after Redis is back").atMost(Duration.ofSeconds(20))
            .untilAsserted(() -> assertThat(ok.get()).as("answered (%s not)", other).isGreaterThanOrEqualTo(afterStart + 40));
      } finally {
        running.set(false);
        clients.shutdown();
        assertThat(clients.awaitTermination(30, TimeUnit.SECONDS)).as("clients stop").isTrue();
      }
      assertThat(other.get()).as("failClosed is off: every request is served").isZero();
      assertThat(ok.get()).isGreaterThan(0);

      await("everything counted while Redis was away is written back")
          .atMost(Duration.ofSeconds(30))
          .until(() -> {
            JsonNode store = report(gateway).get("store");
            return store.get("healthy").asBoolean() && store.get("pendingSettlements").asInt() == 0;
          });
      try (GatewayHarness fresh = GatewayHarness.start("""
          quota: {monthlyTokens: 1000000000}
          store: %s
          """.formatted(redis.uri()))) {
        JsonNode shared = report(fresh);
        assertThat(shared.at("/pools/gold/used").asLong())
            .as("the shared ledger is the usage of the %d answered requests", ok.get())
            .isEqualTo(ok.get() * PER_REQUEST);
        assertThat(shared.at("/teams/release/used").asLong()).isEqualTo(ok.get() * PER_REQUEST);
        assertThat(shared.at("/pools/gold/reserved").asLong()).as("no reservation left behind").isZero();
      }
    }
  }
}
