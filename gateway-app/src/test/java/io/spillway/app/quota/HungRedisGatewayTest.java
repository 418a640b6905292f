package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.redis.testing.RedisServer;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two replicas on one real redis-server, and the Redis frozen with SIGSTOP (up, but answering
 * nobody) while requests of an API key with a token budget arrive (issue 25, finding 5): no request
 * fails (the budget check waits at most {@code quota.storeTimeout} and answers from the last figure),
 * and once Redis wakes the key's usage is exactly what was used, though Redis ran the writes it had
 * received while frozen and the replicas wrote the same amounts back.
 */
class HungRedisGatewayTest {
  static final String MONTH = "2026-11";
  /** The usage the stub reports for every request (12 prompt + 7 completion). */
  static final long PER_REQUEST = 19;

  static String config(RedisServer redis) {
    return """
        quota: {monthlyTokens: 10000000, flushInterval: 100ms, storeTimeout: 300ms}
        failover: {fleetTimeout: 300ms}
        shaping: {degrade: never}
        store: %s
        """.formatted(redis.uri());
  }

  @Test
  void aHungRedisFailsNoRequestOfAKeyWithABudgetAndItsUsageCountsOnce() throws Exception {
    try (RedisServer redis = RedisServer.start();
        GatewayHarness a = GatewayHarness.start(config(redis));
        GatewayHarness b = GatewayHarness.start(config(redis))) {
      for (GatewayHarness replica : List.of(a, b)) {
        replica.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      }
      JsonNode created = Json.parse(a.post("/admin/keys", ADMIN_TOKEN,
          "{\"team\":\"ci\",\"tier\":\"silver\",\"monthlyTokens\":1000000}").body());
      String id = created.get("id").asText();
      String secret = created.get("key").asText();
      await("both replicas know the key").atMost(Duration.ofSeconds(10)).until(() ->
          b.post("/v1/chat/completions", secret, chatBody("gpt-4o", "hi", false)).statusCode() == 200);
      int served = 1;

      List<Integer> statuses = new ArrayList<>();
      redis.freeze();
      try {
        for (int i = 0; i < 6; i++) {
          statuses.add((i % 2 == 0 ? a : b).post("/v1/chat/completions", secret, chatBody("gpt-4o", "hi", false))
              .statusCode());
        }
      } finally {
        redis.thaw();
      }
      served += statuses.size();

      assertThat(statuses).as("answered from the last figures, never a 500").containsOnly(200);
      long expected = served * PER_REQUEST;
      await("what each replica kept while Redis hung is written back, once").atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> assertThat(usage(redis, id)).isEqualTo(expected));
      // Stays exact: no later write-back adds a replayed amount again.
      HttpResponse<String> after = a.post("/v1/chat/completions", secret, chatBody("gpt-4o", "hi", false));
      assertThat(after.statusCode()).isEqualTo(200);
      await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
          assertThat(usage(redis, id)).isEqualTo(expected + PER_REQUEST));
    }
  }

  static long usage(RedisServer redis, String id) {
    String value = redis.command("HGET spillway:keys:usage:" + MONTH + " " + id);
    return value == null ? 0 : Long.parseLong(value);
  }
}
