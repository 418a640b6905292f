package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LogCapture;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.redis.testing.RedisServer;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A replica started while its Redis ({@code store: redis://...}) is down starts degraded, as
 * docs/quota.md says, with one log line and no stack trace: with {@code quota.failClosed: false} it
 * serves on local accounting and {@code /readyz} stays 200 (the store shown unhealthy); with
 * {@code failClosed: true} {@code /readyz} is 503 and requests get 503 until Redis answers. A real
 * {@code redis-server}, started by the test after the gateway, brings it back to shared counters.
 */
class RedisDownAtStartTest {
  @TempDir
  Path dir;

  @ParameterizedTest(name = "failClosed={0}")
  @ValueSource(booleans = {false, true})
  void aReplicaStartedWhileRedisIsDownStartsDegradedAndRecoversWhenRedisComesUp(boolean failClosed)
      throws Exception {
    RedisServer redis = RedisServer.notStarted(dir.resolve("redis"));
    try (LogCapture logs = new LogCapture();
        redis;
        GatewayHarness harness = GatewayHarness.start("""
            store: %s
            quota:
              failClosed: %s
              flushInterval: 200ms
              storeTimeout: 500ms
            """.formatted(redis.uri(), failClosed))) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));

      List<String> problems = logs.lines().stream()
          .filter(line -> line.startsWith("ERROR") || line.startsWith("WARN"))
          .filter(line -> line.contains("Redis"))
          .toList();
      // One line for the outage from each part that shares state through Redis: the usage store
      // (ERROR: quota is no longer shared), the fleet breaker (WARN: it decides on its own) and the
      // risk index (WARN: it counts this replica's requests alone).
      assertThat(problems).as("one line for the outage per shared part").hasSize(3)
          .allSatisfy(line -> assertThat(line).contains("unreachable").doesNotContain("caused by"));
      assertThat(problems).filteredOn(line -> line.startsWith("ERROR")).as("one ERROR").hasSize(1)
          .allSatisfy(line -> assertThat(line).contains("Quota store"));
      assertThat(problems).filteredOn(line -> line.startsWith("WARN")).hasSize(2)
          .allSatisfy(line -> assertThat(line).contains("local-fallback"))
          .anySatisfy(line -> assertThat(line).contains("breaker"))
          .anySatisfy(line -> assertThat(line).contains("risk index"));
      assertThat(logs.lines()).as("no stack trace at INFO and above")
          .filteredOn(line -> !line.startsWith("DEBUG") && !line.startsWith("TRACE"))
          .noneMatch(line -> line.contains("caused by"));

      HttpResponse<String> readyz = harness.get("/readyz", null);
      JsonNode ready = Json.parse(readyz.body());
      assertThat(ready.path("quotaStore").path("healthy").asBoolean()).isFalse();
      assertThat(ready.at("/risk/mode").asText()).isEqualTo("local-fallback");
      HttpResponse<String> chat = harness.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false));
      if (failClosed) {
        assertThat(readyz.statusCode()).isEqualTo(503);
        assertThat(ready.path("reasons").toString()).contains("quota store");
        assertThat(chat.statusCode()).isEqualTo(503);
        assertThat(chat.headers().firstValue("retry-after")).isPresent();
      } else {
        assertThat(readyz.statusCode()).as("fail-open: serving on local accounting").isEqualTo(200);
        assertThat(chat.statusCode()).isEqualTo(200);
      }

      redis.startAgain();

      await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
        HttpResponse<String> again = harness.get("/readyz", null);
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(Json.parse(again.body()).path("quotaStore").path("healthy").asBoolean()).isTrue();
        assertThat(Json.parse(again.body()).at("/risk/mode").asText()).isEqualTo("fleet");
        assertThat(Json.parse(again.body()).at("/breaker/mode").asText()).isEqualTo("fleet");
      });
      HttpResponse<String> served = harness.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false));
      assertThat(served.statusCode()).isEqualTo(200);
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
        JsonNode store = quota(harness).path("store");
        assertThat(store.path("healthy").asBoolean()).isTrue();
        assertThat(store.path("pendingSettlements").asInt()).as("outage-era usage written back").isZero();
      });
      assertThat(quota(harness).path("pools").path("silver").path("used").asLong())
          .as("the shared ledger in Redis has the usage").isPositive();
    }
  }

  private static JsonNode quota(GatewayHarness harness) throws IOException {
    return Json.parse(harness.get("/admin/quota", ADMIN_TOKEN).body());
  }
}
