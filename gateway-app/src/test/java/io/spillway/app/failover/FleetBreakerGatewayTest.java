package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
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
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.redis.testing.RedisServer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
 * A fleet of three gateways, each on its own port with its own Redis clients, sharing one real
 * Redis, one cloud (WireMock) and one local model server (WireMock): the breaker and the risk index
 * are the fleet's. What the cloud tells one replica moves all three within a second; one probe goes
 * out for the fleet, and a probe whose replica died is handed on when its lease runs out; an
 * override set on one holds on all; with Redis killed mid-load every replica serves on its own
 * breaker, counts, and usage, says so, loses nothing, and rejoins when Redis is back. Every test
 * sends gold, silver and bronze requests.
 */
class FleetBreakerGatewayTest {
  /**
   * How long a change may take to reach every replica before the test fails. Generous: the awaits
   * return as soon as it arrives, so only what never arrives fails, not what a loaded machine delays.
   */
  private static final Duration EVENTUALLY = Duration.ofSeconds(20);
  private static final String[] KEYS = {GOLD_KEY, SILVER_KEY, BRONZE_KEY};
  private static final Map<String, String> TEAM_OF_KEY = Map.of(GOLD_KEY, "release", SILVER_KEY, "web", BRONZE_KEY, "sandbox");
  /** What every stubbed answer reports: 12 prompt and 7 completion tokens. */
  private static final long TOKENS_PER_REQUEST = 19;
  private static final Duration PROBE_LEASE = Duration.ofMinutes(3);

  @TempDir Path dir;
  RedisServer redis;
  List<GatewayHarness> replicas = new ArrayList<>();
  /** The one cloud and the one local server every replica talks to (started by the first replica's harness). */
  WireMockServer cloud;
  WireMockServer local;

  @BeforeEach
  void startThreeReplicasOnOneRedis() {
    redis = RedisServer.start(dir);
    // Timeouts of a second: this machine is shared and loaded; a 200 ms Redis stall is not what
    // these tests are about (FleetBreakerTest and FleetRiskCountsTest cover the timeout itself).
    String shared = """
        failover: {fleetTimeout: 1s, fleetRefresh: 250ms, probeLease: 3m}
        quota:
          storeTimeout: 1s
          flushInterval: 250ms
          # The load runs as fast as the machine lets it, for as long as the outage takes: with the
          # default limits (silver 50 a minute, bronze 200 an hour, on a clock that stands still) how
          # many requests fit depends on the machine. Request limits are not what these tests are
          # about (RedisRequestLimiterTest covers them through an outage), so they are out of reach.
          tiers:
            silver: {requestsPerMinutePerTeam: 1000000}
            bronze: {requestsPerHour: 1000000}
        server: {drainTimeout: 500ms}
        store: %s
        """.formatted(redis.uri());
    GatewayHarness first = GatewayHarness.start(shared + "local: {kind: openai}\n");
    replicas.add(first);
    cloud = first.cloud;
    local = first.ollama;
    String sameBackends = "cloud: {baseUrl: %s/v1}\nlocal: {kind: openai, baseUrl: %s}\n"
        .formatted(cloud.baseUrl(), local.baseUrl());
    for (int i = 1; i < 3; i++) {
      replicas.add(GatewayHarness.start(shared + sameBackends));
    }
    stubChat(local, LOCAL_TEXT);
    stubChat(cloud, "Served by the cloud");
  }

  @AfterEach
  void stop() {
    // The first replica's harness owns the cloud and local stand-ins: it goes last.
    for (int i = replicas.size() - 1; i >= 0; i--) {
      replicas.get(i).close();
    }
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
    await("every replica's breaker shows " + field + " " + value).atMost(EVENTUALLY)
        .pollInterval(Duration.ofMillis(20))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r -> assertThat(breaker(r).get(field).asText()).isEqualTo(value)));
  }

  void everyReplicaReadyzShows(String pointer, String value) {
    await("every replica's /readyz shows " + pointer + " " + value).atMost(Duration.ofSeconds(3))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r ->
            assertThat(json(r.get("/readyz", null)).at(pointer).asText()).isEqualTo(value)));
  }

  void cloudAtCapacity() {
    cloud.resetAll();
    stubChat(cloud, OpenAiStubs.atCapacity());
  }

  void cloudServes() {
    cloud.resetAll();
    stubChat(cloud, "Served by the cloud");
  }

  int cloudCalls() {
    return cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).size();
  }

  /** Three capacity answers, one through each replica with a key of each tier. */
  void openTheFleetsBreaker() {
    cloudAtCapacity();
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> answer = chat(replicas.get(i), KEYS[i]);
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(backend(answer)).as("capacity answer %d is retried locally", i + 1).isEqualTo("local");
    }
  }

  @Test
  void capacityAnswersSpreadOverThreeReplicasMoveAllThreeLocalWithinASecond() {
    openTheFleetsBreaker();

    everyReplicaShows("state", "open");
    assertThat(cloudCalls()).isEqualTo(3);
    for (int i = 0; i < 3; i++) {
      for (String key : KEYS) {
        assertThat(backend(chat(replicas.get(i), key))).isEqualTo("local");
      }
    }
    assertThat(cloudCalls()).as("no replica asks a cloud that said it is full").isEqualTo(3);
    JsonNode status = json(replicas.get(2).get("/admin/status", ADMIN_TOKEN));
    assertThat(status.at("/breaker/mode").asText()).isEqualTo("fleet");
    assertThat(status.at("/breaker/history/0/reason").asText()).contains("3 capacity answers in a row across the fleet");
  }

  @Test
  void capacitySeenByOneReplicaMovesTheOtherTwoWithinASecond() {
    cloudAtCapacity();
    GatewayHarness a = replicas.get(0);
    for (String key : KEYS) {
      assertThat(backend(chat(a, key))).isEqualTo("local");
    }

    everyReplicaShows("state", "open");
    assertThat(backend(chat(replicas.get(1), SILVER_KEY))).isEqualTo("local");
    assertThat(backend(chat(replicas.get(2), BRONZE_KEY))).isEqualTo("local");
    assertThat(cloudCalls()).as("only a's three").isEqualTo(3);
  }

  @Test
  void halfOpenSendsOneProbeForTheWholeFleet() throws Exception {
    openTheFleetsBreaker();
    everyReplicaShows("state", "open");
    replicas.forEach(r -> r.clock.advance(Duration.ofMinutes(5)));

    List<Future<HttpResponse<String>>> answers = new ArrayList<>();
    try (ExecutorService clients = Executors.newFixedThreadPool(9)) {
      for (int i = 0; i < 9; i++) {
        GatewayHarness replica = replicas.get(i % 3);
        String key = KEYS[(i / 3) % 3];
        answers.add(clients.submit(() -> chat(replica, key)));
      }
    }
    for (Future<HttpResponse<String>> answer : answers) {
      assertThat(answer.get().statusCode()).isEqualTo(200);
      assertThat(backend(answer.get())).isEqualTo("local");
    }

    assertThat(cloudCalls()).as("the three that opened it, and one probe for nine requests on three replicas")
        .isEqualTo(4);
    everyReplicaShows("state", "open");
  }

  @Test
  void aProbeWhoseReplicaDiesIsHandedOnOnceItsLeaseRunsOut() throws Exception {
    openTheFleetsBreaker();
    everyReplicaShows("state", "open");
    replicas.forEach(r -> r.clock.advance(Duration.ofMinutes(5)));
    cloud.resetAll();
    stubChat(cloud, OpenAiStubs.atCapacity().withFixedDelay(3_000));
    GatewayHarness dying = replicas.get(1);

    CompletableFuture<HttpResponse<String>> probe = CompletableFuture.supplyAsync(() -> chat(dying, SILVER_KEY));
    await("the probe reached the cloud").atMost(Duration.ofSeconds(2)).until(() -> cloudCalls() == 1);
    everyReplicaShows("probeInFlight", "true");
    // The replica dies with its probe in flight: its Redis clients go first, so nothing is released.
    dying.gateway().breaker().close();
    dying.close();
    replicas.remove(dying);
    probe.handle((answer, failure) -> null).get();
    cloudServes();

    for (GatewayHarness replica : replicas) {
      for (String key : KEYS) {
        assertThat(backend(chat(replica, key))).as("the dead replica's lease still holds the probe").isEqualTo("local");
      }
    }
    assertThat(cloudCalls()).isZero();

    replicas.forEach(r -> r.clock.advance(PROBE_LEASE));
    assertThat(backend(chat(replicas.get(1), BRONZE_KEY))).as("the next request is the probe").isEqualTo("cloud");

    everyReplicaShows("state", "closed");
    for (GatewayHarness replica : replicas) {
      assertThat(backend(chat(replica, GOLD_KEY))).isEqualTo("cloud");
    }
    assertThat(cloudCalls()).isEqualTo(1 + replicas.size());
  }

  @Test
  void theProbesSuccessOnOneReplicaBringsAllThreeBackToTheCloud() {
    openTheFleetsBreaker();
    everyReplicaShows("state", "open");
    replicas.forEach(r -> r.clock.advance(Duration.ofMinutes(5)));
    cloudServes();

    assertThat(backend(chat(replicas.get(1), SILVER_KEY))).as("the probe").isEqualTo("cloud");

    everyReplicaShows("state", "closed");
    for (int i = 0; i < 3; i++) {
      assertThat(backend(chat(replicas.get(i), KEYS[i]))).isEqualTo("cloud");
    }
  }

  @Test
  void aForcedOpenSetOnOneReplicaHoldsOnAllThree() {
    assertThat(setBreaker(replicas.get(0), "{\"state\":\"open\"}").statusCode()).isEqualTo(200);

    everyReplicaShows("override", "open");
    for (int i = 0; i < 3; i++) {
      for (String key : KEYS) {
        assertThat(backend(chat(replicas.get(i), key))).isEqualTo("local");
      }
    }
    assertThat(cloudCalls()).isZero();

    assertThat(setBreaker(replicas.get(2), "{\"state\":\"auto\"}").statusCode()).isEqualTo(200);
    everyReplicaShows("override", "auto");
    everyReplicaShows("state", "half_open");
  }

  @Test
  void aForcedCloseSetOnOneReplicaHoldsOnAllThree() {
    cloudAtCapacity();
    assertThat(setBreaker(replicas.get(1), "{\"state\":\"closed\"}").statusCode()).isEqualTo(200);

    everyReplicaShows("override", "closed");
    for (int i = 0; i < 3; i++) {
      for (String key : KEYS) {
        HttpResponse<String> answer = chat(replicas.get(i), key);
        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(backend(answer)).as("each capacity answer is still retried locally").isEqualTo("local");
      }
    }
    assertThat(cloudCalls()).as("nine capacity answers, and every replica still sends to the cloud").isEqualTo(9);
    everyReplicaShows("state", "closed");

    assertThat(setBreaker(replicas.get(0), "{\"state\":\"auto\"}").statusCode()).isEqualTo(200);
    everyReplicaShows("override", "auto");
    everyReplicaShows("streak", "0");
  }

  @Test
  void theRiskIndexOnEachReplicaCountsTheRequestsOfAllThree() {
    for (int i = 0; i < 3; i++) {
      for (String key : KEYS) {
        assertThat(chat(replicas.get(i), key).statusCode()).isEqualTo(200);
      }
    }

    await("each replica's risk index counts all nine requests").atMost(EVENTUALLY).untilAsserted(() ->
        assertThat(replicas).allSatisfy(r -> {
          JsonNode risk = json(r.get("/admin/status", ADMIN_TOKEN)).get("risk");
          assertThat(risk.at("/requests/recent").asLong()).isEqualTo(9);
          assertThat(risk.at("/requests/lastWindow").asLong()).isEqualTo(9);
          assertThat(risk.at("/counts/mode").asText()).isEqualTo("fleet");
        }));
    assertThat(json(replicas.get(0).get("/readyz", null)).at("/risk/mode").asText()).isEqualTo("fleet");
    assertThat(replicas.get(0).get("/metrics", null).body()).contains("spillway_risk_mode{mode=\"fleet\"} 1.0");
  }

  @Test
  void withRedisKilledEveryReplicaKeepsServingOnItsOwnBreakerAndRejoinsWhenRedisReturns() {
    redis.crash();

    everyReplicaReadyzShows("/breaker/mode", "local-fallback");
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> answer = chat(replicas.get(i), KEYS[i]);
      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(backend(answer)).isEqualTo("cloud");
    }
    GatewayHarness a = replicas.get(0);
    assertThat(json(a.get("/admin/status", ADMIN_TOKEN)).at("/breaker/mode").asText()).isEqualTo("local-fallback");
    assertThat(a.get("/metrics", null).body()).contains("spillway_breaker_mode{mode=\"local-fallback\"} 1.0");
    cloudAtCapacity();
    for (String key : KEYS) {
      assertThat(backend(chat(a, key))).isEqualTo("local");
    }
    assertThat(breaker(a).get("state").asText()).as("a decides alone").isEqualTo("open");
    assertThat(breaker(replicas.get(1)).get("state").asText()).isEqualTo("closed");

    redis.startAgain();

    everyReplicaReadyzShows("/breaker/mode", "fleet");
    assertThat(a.get("/metrics", null).body()).contains("spillway_breaker_mode{mode=\"fleet\"} 1.0");
    cloudServes();
    for (int i = 0; i < 3; i++) {
      assertThat(chat(replicas.get(i), KEYS[i]).statusCode()).isEqualTo(200);
    }
  }

  /** Load runs meanwhile: Redis crashes, every replica degrades as documented, Redis returns. */
  private void loadThroughTheOutage(AtomicInteger answered) {
    await().atMost(Duration.ofSeconds(20)).until(() -> answered.get() >= 10);
    redis.crash();

    everyReplicaReadyzShows("/breaker/mode", "local-fallback");
    everyReplicaReadyzShows("/risk/mode", "local-fallback");
    int beforeRestart = answered.get();
    await().atMost(Duration.ofSeconds(20)).until(() -> answered.get() >= beforeRestart + 15);
    // What quota.md promises while Redis is away with quota.failClosed: false: each replica keeps
    // serving (/readyz 200), shows the store unhealthy, and queues what it settles.
    await("every replica counts usage locally and queues it").atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r -> {
          HttpResponse<String> ready = r.get("/readyz", null);
          assertThat(ready.statusCode()).isEqualTo(200);
          assertThat(json(ready).at("/quotaStore/healthy").asBoolean()).isFalse();
          JsonNode store = json(r.get("/admin/quota", ADMIN_TOKEN)).get("store");
          assertThat(store.get("healthy").asBoolean()).isFalse();
          assertThat(store.get("pendingSettlements").asInt()).isPositive();
          assertThat(r.get("/metrics", null).body()).contains("spillway_quota_store_healthy 0.0");
        }));
    redis.startAgain();

    everyReplicaReadyzShows("/breaker/mode", "fleet");
    everyReplicaReadyzShows("/risk/mode", "fleet");
    int afterRestart = answered.get();
    await().atMost(Duration.ofSeconds(20)).until(() -> answered.get() >= afterRestart + 10);
  }

  long teamUsed(GatewayHarness replica, String team) {
    return json(replica.get("/admin/quota", ADMIN_TOKEN)).at("/teams/" + team + "/used").asLong();
  }

  @Test
  void redisKilledAndRestartedMidLoadLosesNoRequestAndNoUsage() throws Exception {
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger answered = new AtomicInteger();
    List<Future<List<String>>> clients = new ArrayList<>();
    List<HttpResponse<String>> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (ExecutorService pool = Executors.newFixedThreadPool(6)) {
      for (int c = 0; c < 6; c++) {
        int client = c;
        clients.add(pool.submit(() -> {
          List<String> servedKeys = new ArrayList<>();
          for (int i = client; running.get(); i += 6) {
            String key = KEYS[(i / 3) % 3];
            HttpResponse<String> answer = chat(replicas.get(i % 3), key);
            if (answer.statusCode() == 200) {
              servedKeys.add(key);
            } else {
              failures.add(answer);
            }
            answered.incrementAndGet();
          }
          return servedKeys;
        }));
      }
      try {
        loadThroughTheOutage(answered);
      } finally {
        running.set(false); // a failed wait fails the test; it must not leave the clients running forever
      }
    }

    List<String> served = new ArrayList<>();
    for (Future<List<String>> client : clients) {
      served.addAll(client.get());
    }
    assertThat(failures.stream().map(f -> f.statusCode() + " " + f.body()))
        .as("every request answered 200, through the outage").isEmpty();
    assertThat(served).as("all three tiers in the load").contains(GOLD_KEY, SILVER_KEY, BRONZE_KEY);
    await("every replica has written back what it counted while Redis was away").atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r -> {
          JsonNode store = json(r.get("/admin/quota", ADMIN_TOKEN)).get("store");
          assertThat(store.get("healthy").asBoolean()).isTrue();
          assertThat(store.get("pendingSettlements").asInt()).isZero();
        }));
    for (String key : KEYS) {
      String team = TEAM_OF_KEY.get(key);
      long requests = served.stream().filter(key::equals).count();
      assertThat(teamUsed(replicas.get(2), team))
          .as("team %s: 19 tokens for each of its %d answered requests, none lost", team, requests)
          .isEqualTo(requests * TOKENS_PER_REQUEST);
    }
  }
}
