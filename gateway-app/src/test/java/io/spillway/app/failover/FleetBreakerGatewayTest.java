package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_OPENAI;
import static io.spillway.app.failover.FailoverFixtures.LOCAL_TEXT;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.json;
import static io.spillway.app.failover.FailoverFixtures.setBreaker;
import static io.spillway.app.failover.FailoverFixtures.stubChat;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.BRONZE_KEY;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.quota.testing.RedisServer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three gateways, each on its own port with its own cloud and local stand-ins, sharing one real
 * Redis: the breaker is the fleet's. What one replica's cloud says moves all three within a
 * second; one probe goes out for the fleet; an override set on one holds on all; with Redis gone
 * each replica serves on its own breaker and says so, and rejoins when Redis is back.
 */
class FleetBreakerGatewayTest {
  private static final Duration WITHIN_A_SECOND = Duration.ofSeconds(1);
  private static final String[] KEYS = {GOLD_KEY, SILVER_KEY, BRONZE_KEY};

  @TempDir Path dir;
  RedisServer redis;
  List<GatewayHarness> replicas = new ArrayList<>();

  @BeforeEach
  void startThreeReplicasOnOneRedis() {
    redis = RedisServer.start(dir);
    String config = LOCAL_OPENAI + """
        failover: {fleetTimeout: 200ms, fleetRefresh: 250ms}
        quota: {storeTimeout: 200ms, flushInterval: 250ms}
        store: %s
        """.formatted(redis.uri());
    for (int i = 0; i < 3; i++) {
      GatewayHarness replica = GatewayHarness.start(config);
      stubChat(replica.ollama, LOCAL_TEXT);
      stubChat(replica.cloud, "Served by the cloud");
      replicas.add(replica);
    }
  }

  @AfterEach
  void stop() {
    replicas.forEach(GatewayHarness::close);
    if (redis != null) {
      redis.close();
    }
  }

  static HttpResponse<String> chat(GatewayHarness replica, String key) {
    return replica.post("/v1/chat/completions", key, chatBody("gpt-4o", "Write a haiku about rivers", false));
  }

  static String backend(HttpResponse<String> response) {
    return response.headers().firstValue("x-spillway-backend").orElse("");
  }

  void everyReplicaShows(String field, String value) {
    await("every replica's breaker shows " + field + " " + value).atMost(WITHIN_A_SECOND)
        .pollInterval(Duration.ofMillis(20))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r -> assertThat(breaker(r).get(field).asText()).isEqualTo(value)));
  }

  void allCloudsAtCapacity() {
    for (GatewayHarness replica : replicas) {
      replica.cloud.resetAll();
      stubChat(replica.cloud, OpenAiStubs.atCapacity());
    }
  }

  int cloudCalls() {
    int calls = 0;
    for (GatewayHarness replica : replicas) {
      calls += replica.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).size();
    }
    return calls;
  }

  @Test
  void capacityAnswersSpreadOverThreeReplicasMoveAllThreeLocalWithinASecond() {
    allCloudsAtCapacity();

    for (int i = 0; i < 3; i++) {
      HttpResponse<String> answer = chat(replicas.get(i), KEYS[i]);
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(backend(answer)).as("capacity answer %d is retried locally", i + 1).isEqualTo("local");
    }

    everyReplicaShows("state", "open");
    assertThat(cloudCalls()).isEqualTo(3);
    for (int i = 0; i < 3; i++) {
      assertThat(backend(chat(replicas.get(i), KEYS[i]))).isEqualTo("local");
    }
    assertThat(cloudCalls()).as("no replica asks a cloud that said it is full").isEqualTo(3);
    JsonNode status = json(replicas.get(2).get("/admin/status", ADMIN_TOKEN));
    assertThat(status.at("/breaker/mode").asText()).isEqualTo("fleet");
    assertThat(status.at("/breaker/history/0/reason").asText()).contains("3 capacity answers in a row across the fleet");
  }

  @Test
  void capacitySeenByOneReplicaMovesTheOtherTwoWithinASecond() {
    GatewayHarness a = replicas.get(0);
    a.cloud.resetAll();
    stubChat(a.cloud, OpenAiStubs.atCapacity());

    for (int i = 0; i < 3; i++) {
      assertThat(backend(chat(a, KEYS[i]))).isEqualTo("local");
    }

    everyReplicaShows("state", "open");
    assertThat(backend(chat(replicas.get(1), SILVER_KEY))).isEqualTo("local");
    assertThat(backend(chat(replicas.get(2), BRONZE_KEY))).isEqualTo("local");
    assertThat(replicas.get(1).cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")))).isEmpty();
  }

  @Test
  void halfOpenSendsOneProbeForTheWholeFleet() throws Exception {
    allCloudsAtCapacity();
    for (int i = 0; i < 3; i++) {
      chat(replicas.get(i), KEYS[i]);
    }
    everyReplicaShows("state", "open");
    replicas.forEach(r -> r.clock.advance(Duration.ofMinutes(5)));

    List<Future<HttpResponse<String>>> answers = new ArrayList<>();
    try (ExecutorService clients = Executors.newFixedThreadPool(9)) {
      for (int i = 0; i < 9; i++) {
        GatewayHarness replica = replicas.get(i % 3);
        String key = KEYS[i % 3];
        answers.add(clients.submit(() -> chat(replica, key)));
      }
    }
    for (Future<HttpResponse<String>> answer : answers) {
      assertThat(answer.get().statusCode()).isEqualTo(200);
      assertThat(backend(answer.get())).isEqualTo("local");
    }

    assertThat(cloudCalls()).as("the three that opened it, and one probe").isEqualTo(4);
    everyReplicaShows("state", "open");
  }

  @Test
  void theProbesSuccessOnOneReplicaBringsAllThreeBackToTheCloud() {
    allCloudsAtCapacity();
    for (int i = 0; i < 3; i++) {
      chat(replicas.get(i), KEYS[i]);
    }
    everyReplicaShows("state", "open");
    replicas.forEach(r -> r.clock.advance(Duration.ofMinutes(5)));
    GatewayHarness b = replicas.get(1);
    b.cloud.resetAll();
    stubChat(b.cloud, "Served by the cloud");

    assertThat(backend(chat(b, SILVER_KEY))).as("the probe").isEqualTo("cloud");

    everyReplicaShows("state", "closed");
    for (GatewayHarness replica : replicas) {
      replica.cloud.resetAll();
      stubChat(replica.cloud, "Served by the cloud");
    }
    for (int i = 0; i < 3; i++) {
      assertThat(backend(chat(replicas.get(i), KEYS[i]))).isEqualTo("cloud");
    }
  }

  @Test
  void anOverrideSetOnOneReplicaHoldsOnAllThree() {
    assertThat(setBreaker(replicas.get(0), "{\"state\":\"open\"}").statusCode()).isEqualTo(200);

    everyReplicaShows("override", "open");
    for (int i = 0; i < 3; i++) {
      assertThat(backend(chat(replicas.get(i), KEYS[i]))).isEqualTo("local");
    }
    assertThat(cloudCalls()).isZero();

    assertThat(setBreaker(replicas.get(2), "{\"state\":\"auto\"}").statusCode()).isEqualTo(200);
    everyReplicaShows("override", "auto");
    everyReplicaShows("state", "half_open");
  }

  @Test
  void withRedisKilledEveryReplicaKeepsServingOnItsOwnBreakerAndRejoinsWhenRedisReturns() {
    redis.crash();

    await("every replica falls back to its own breaker").atMost(Duration.ofSeconds(2))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r ->
            assertThat(json(r.get("/readyz", null)).at("/breaker/mode").asText()).isEqualTo("local-fallback")));
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> answer = chat(replicas.get(i), KEYS[i]);
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(backend(answer)).isEqualTo("cloud");
    }
    GatewayHarness a = replicas.get(0);
    assertThat(json(a.get("/admin/status", ADMIN_TOKEN)).at("/breaker/mode").asText()).isEqualTo("local-fallback");
    assertThat(a.get("/metrics", null).body()).contains("spillway_breaker_mode{mode=\"local-fallback\"} 1.0");
    a.cloud.resetAll();
    stubChat(a.cloud, OpenAiStubs.atCapacity());
    for (int i = 0; i < 3; i++) {
      assertThat(backend(chat(a, GOLD_KEY))).isEqualTo("local");
    }
    assertThat(breaker(a).get("state").asText()).as("a decides alone").isEqualTo("open");
    assertThat(breaker(replicas.get(1)).get("state").asText()).isEqualTo("closed");

    redis.startAgain();

    await("every replica rejoins the fleet's breaker").atMost(Duration.ofSeconds(3))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r ->
            assertThat(json(r.get("/readyz", null)).at("/breaker/mode").asText()).isEqualTo("fleet")));
    assertThat(a.get("/metrics", null).body()).contains("spillway_breaker_mode{mode=\"fleet\"} 1.0");
    for (int i = 0; i < 3; i++) {
      assertThat(chat(replicas.get(i), KEYS[i]).statusCode()).isEqualTo(200);
    }
  }

  long usedTokens(GatewayHarness replica) {
    JsonNode pools = json(replica.get("/admin/quota", ADMIN_TOKEN)).get("pools");
    return pools.get("gold").get("used").asLong() + pools.get("silver").get("used").asLong()
        + pools.get("bronze").get("used").asLong();
  }

  @Test
  void redisKilledAndRestartedMidLoadLosesNoRequestAndNoUsage() throws Exception {
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger answered = new AtomicInteger();
    List<Future<List<Integer>>> clients = new ArrayList<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(6)) {
      for (int c = 0; c < 6; c++) {
        int client = c;
        clients.add(pool.submit(() -> {
          List<Integer> statuses = new ArrayList<>();
          for (int i = client; running.get(); i += 6) {
            statuses.add(chat(replicas.get(i % 3), KEYS[(i / 3) % 3]).statusCode());
            answered.incrementAndGet();
          }
          return statuses;
        }));
      }
      await().atMost(Duration.ofSeconds(20)).until(() -> answered.get() >= 10);
      redis.crash();
      await("every replica falls back to its own breaker").atMost(Duration.ofSeconds(2))
          .untilAsserted(() -> assertThat(replicas).allSatisfy(r ->
              assertThat(json(r.get("/readyz", null)).at("/breaker/mode").asText()).isEqualTo("local-fallback")));
      int beforeRestart = answered.get();
      await().atMost(Duration.ofSeconds(20)).until(() -> answered.get() >= beforeRestart + 15);
      redis.startAgain();
      await("every replica rejoins the fleet's breaker").atMost(Duration.ofSeconds(3))
          .untilAsserted(() -> assertThat(replicas).allSatisfy(r ->
              assertThat(json(r.get("/readyz", null)).at("/breaker/mode").asText()).isEqualTo("fleet")));
      int afterRestart = answered.get();
      await().atMost(Duration.ofSeconds(20)).until(() -> answered.get() >= afterRestart + 10);
      running.set(false);
    }

    List<Integer> statuses = new ArrayList<>();
    for (Future<List<Integer>> client : clients) {
      statuses.addAll(client.get());
    }
    assertThat(statuses).as("every request answered, through the outage").containsOnly(200);
    await("every replica has written back what it counted while Redis was away").atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r -> {
          JsonNode store = json(r.get("/admin/quota", ADMIN_TOKEN)).get("store");
          assertThat(store.get("healthy").asBoolean()).isTrue();
          assertThat(store.get("pendingSettlements").asInt()).isZero();
        }));
    assertThat(usedTokens(replicas.get(0))).as("12 + 7 tokens for each answered request, none lost")
        .isEqualTo(statuses.size() * 19L);
  }
}
