package io.spillway.app.deploy;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.deploy.FleetLoad.Client;
import io.spillway.app.deploy.FleetLoad.Result;
import io.spillway.app.sim.SimulatedOllama;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.redis.testing.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer.OrderAnnotation;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The shared gateway of docs/deploy.md as separate processes: three {@code java -jar spillway.jar
 * serve} replicas, a real nginx in front of them running docker/nginx-fleet.conf, one real
 * {@code redis-server}, two fake GPU boxes (Spillway's simulated Ollama) and a fake cloud. Clients of
 * every tier send streamed and buffered requests through nginx while the cloud storms, Redis hangs
 * and a replica is killed; afterwards every team's usage in Redis is what its clients were answered.
 * One fleet serves the whole class, in order; the replica is killed last.
 */
@Tag("packaged")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(OrderAnnotation.class)
class FleetProcessesTest {
  static final String ADMIN_TOKEN = "fleet-admin-token";
  static final List<Client> CLIENTS = List.of(
      new Client("sk-fleet-gold", "release"), new Client("sk-fleet-silver", "web"), new Client("sk-fleet-bronze", "sandbox"));
  static final Duration LOCAL_FOR = Duration.ofSeconds(4);
  static final Duration CLOUD_ANSWER = Duration.ofMillis(600);
  static final String CAPACITY = """
      {"error":{"message":"Selected model is at capacity. Please try a different model.","type":"server_error","param":null,"code":null}}
      """;
  static final ObjectMapper JSON = new ObjectMapper();

  Path dir;
  RedisServer redis;
  WireMockServer cloud;
  List<SimulatedOllama> gpus = new ArrayList<>();
  List<ReplicaProcess> replicas = new ArrayList<>();
  FleetNginx nginx;
  /** Every request of every test so far: the usage check compares Redis with all of them. */
  List<Result> answered = new ArrayList<>();

  @BeforeAll
  void startTheFleet() throws IOException {
    ExternalTool.require("nginx", "nginx");
    dir = Files.createTempDirectory("spillway-fleet");
    redis = RedisServer.start(dir.resolve("redis"));
    cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    cloudHasRoom();
    for (int i = 0; i < 2; i++) {
      gpus.add(new SimulatedOllama("127.0.0.1", 0, Clock.systemUTC(), List.of("qwen2.5-coder:7b", "llama3.2:3b"),
          Duration.ofMillis(30)).start());
    }
    List<Integer> ports = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      int port = PrometheusServer.freePort();
      ports.add(port);
      replicas.add(ReplicaProcess.start("spillway-" + i, port, dir, config(port)));
    }
    replicas.forEach(ReplicaProcess::awaitReady);
    nginx = FleetNginx.start(dir.resolve("nginx"), ports);
  }

  /** docker/gateway.fleet.yaml's settings, with loopback addresses, three tiers' keys and a short localFor. */
  String config(int port) {
    return """
        server: {host: 127.0.0.1, port: %d, drainTimeout: 5s}
        admin: {token: %s}
        cloud: {baseUrl: "%s/v1", apiKey: sk-fleet-cloud, timeout: 20s}
        local:
          kind: ollama
          servers:
            - {name: gpu-1, baseUrl: "%s"}
            - {name: gpu-2, baseUrl: "%s"}
          models: {default: "qwen2.5-coder:7b", gpt-4o-mini: "llama3.2:3b"}
        failover: {capacityStreak: 3, localFor: %ds, fleetTimeout: 1s, fleetRefresh: 250ms, probeLease: 1m}
        keys:
          - {key: %s, team: %s, tier: gold}
          - {key: %s, team: %s, tier: silver}
          - {key: %s, team: %s, tier: bronze}
        quota:
          monthlyTokens: 50000000
          storeTimeout: 1s
          flushInterval: 250ms
          tiers:
            silver: {requestsPerMinutePerTeam: 100000}
            bronze: {requestsPerHour: 1000000}
        store: %s
        logging: {json: true}
        """.formatted(port, ADMIN_TOKEN, cloud.baseUrl(), gpus.get(0).baseUrl(), gpus.get(1).baseUrl(), LOCAL_FOR.toSeconds(),
        CLIENTS.get(0).key(), CLIENTS.get(0).team(), CLIENTS.get(1).key(), CLIENTS.get(1).team(),
        CLIENTS.get(2).key(), CLIENTS.get(2).team(), redis.uri());
  }

  @AfterAll
  void stopTheFleet() {
    if (nginx != null) {
      nginx.close();
    }
    replicas.forEach(ReplicaProcess::close);
    gpus.forEach(SimulatedOllama::close);
    if (cloud != null) {
      cloud.stop();
    }
    if (redis != null) {
      redis.close();
    }
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // a temporary directory left behind is no reason to fail the fleet's tests
    }
  }

  void cloudHasRoom() {
    cloud.resetAll();
    cloud.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
        .willReturn(OpenAiStubs.chatStream(true, "Rivers ", "run ", "to ", "the ", "sea")
            .withChunkedDribbleDelay(4, (int) CLOUD_ANSWER.toMillis())));
    cloud.stubFor(post("/v1/chat/completions").atPriority(5)
        .willReturn(OpenAiStubs.chatCompletion("Rivers run to the sea").withFixedDelay((int) CLOUD_ANSWER.toMillis())));
  }

  void cloudAtCapacity() {
    cloud.resetAll();
    cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(503)
        .withHeader("Content-Type", "application/json").withBody(CAPACITY)));
  }

  FleetLoad load() {
    return new FleetLoad(nginx.baseUrl(), CLIENTS, Duration.ofSeconds(30)).start(3);
  }

  /** The replica's breaker state, or why it did not say (an assertion on it then fails with that). */
  String breakerState(ReplicaProcess replica) {
    try {
      return JSON.readTree(replica.get("/admin/breaker", ADMIN_TOKEN).body()).path("state").asText();
    } catch (IOException | java.io.UncheckedIOException e) {
      return replica + " did not answer /admin/breaker: " + e;
    }
  }

  List<ReplicaProcess> alive() {
    return replicas.stream().filter(ReplicaProcess::alive).toList();
  }

  static void runFor(Duration duration) {
    Instant until = Instant.now().plus(duration);
    await().atMost(duration.plusSeconds(5)).pollInterval(Duration.ofMillis(50)).until(() -> Instant.now().isAfter(until));
  }

  @Test
  @Order(1)
  void aStormSeenByOneReplicaMovesAllThreeLocalWithinASecondAndBackAfterLocalFor() throws Exception {
    assertThat(replicas).allSatisfy(r -> assertThat(breakerState(r)).isEqualTo("closed"));
    cloudAtCapacity();
    ReplicaProcess first = replicas.get(0);
    FleetLoad direct = new FleetLoad(first.baseUrl(), CLIENTS, Duration.ofSeconds(30));
    List<Result> storm = new ArrayList<>();
    for (Client client : CLIENTS) {
      storm.add(direct.send(client, false));
    }
    Instant opened = Instant.now();
    answered.addAll(storm);
    assertThat(storm).as("capacity answers are served locally").allSatisfy(r -> {
      assertThat(r.error()).isNull();
      assertThat(r.backend()).isEqualTo("local");
    });
    assertThat(breakerState(first)).isEqualTo("open");
    await("all three replicas are local").atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r -> assertThat(breakerState(r)).isEqualTo("open")));

    FleetLoad whileLocal = load();
    runFor(Duration.ofSeconds(1));
    cloudHasRoom();
    await("the breaker closes on every replica after localFor").atMost(LOCAL_FOR.plusSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(() -> assertThat(replicas).allSatisfy(r -> assertThat(breakerState(r)).isEqualTo("closed")));
    Instant closed = Instant.now();
    await("every tier is served by the cloud again, streamed and buffered").atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> CLIENTS.stream().allMatch(client -> List.of(false, true).stream().allMatch(stream ->
            whileLocal.soFar().stream().anyMatch(r -> r.team().equals(client.team()) && r.stream() == stream
                && r.start().isAfter(closed) && r.backend().equals("cloud")))));
    List<Result> results = whileLocal.stop();
    answered.addAll(results);

    assertThat(results).as("no request failed").allSatisfy(r -> assertThat(r.error()).as(r.id()).isNull());
    assertThat(Duration.between(opened, closed)).as("back on the cloud after localFor").isGreaterThanOrEqualTo(LOCAL_FOR);
    assertThat(results.stream().filter(r -> r.end().isBefore(opened.plus(LOCAL_FOR))))
        .as("until localFor has passed, every tier is served locally").isNotEmpty()
        .allSatisfy(r -> assertThat(r.backend()).as(r.id()).isEqualTo("local"));
    everyTeamsUsageIsWhatItsClientsWereAnswered();
  }

  @Test
  @Order(2)
  void redisHungAndBackMidLoadFailsNoRequest() throws Exception {
    FleetLoad load = load();
    runFor(Duration.ofSeconds(1));
    redis.freeze();
    try {
      runFor(Duration.ofSeconds(3));
    } finally {
      redis.thaw();
    }
    runFor(Duration.ofSeconds(2));
    List<Result> results = load.stop();
    answered.addAll(results);

    assertThat(results).as("no request failed").allSatisfy(r -> assertThat(r.error()).as(r.id()).isNull());
    assertThat(results).extracting(Result::team).contains("release", "web", "sandbox");
    everyTeamsUsageIsWhatItsClientsWereAnswered();
  }

  @Test
  @Order(3)
  void aReplicaKilledMidLoadFailsOnlyWhatWasInFlightOnItAndTheOtherTwoServeOn() throws Exception {
    ReplicaProcess victim = replicas.get(1);
    FleetLoad load = load();
    runFor(Duration.ofMillis(1500));
    victim.kill();
    Instant killed = Instant.now();
    runFor(Duration.ofSeconds(3));
    List<Result> results = load.stop();
    answered.addAll(results);
    Map<String, String> upstreamOf = nginx.upstreamOf();

    assertThat(results).as("no request hangs").noneSatisfy(r -> assertThat(r.error()).startsWith("HUNG"));
    List<Result> failed = results.stream().filter(r -> !r.ok()).toList();
    assertThat(failed).as("requests were in flight on the killed replica").isNotEmpty();
    assertThat(failed).allSatisfy(r -> {
      assertThat(upstreamOf.get(r.id())).as("%s went to the killed replica", r.id()).contains(":" + victim.port);
      assertThat(r.start()).as("%s was sent before the replica was gone", r.id()).isBefore(killed);
      if (r.status() == 200) {
        assertThat(r.error()).as("a stream cut mid-way ends in an error, not a silent end").startsWith("cut:");
      } else {
        assertThat(r.status()).isEqualTo(502);
        assertThat(r.error()).contains("\"code\":\"replica_unavailable\"");
      }
    });
    assertThat(results.stream().filter(r -> r.start().isAfter(killed)))
        .as("requests sent after the kill go on through the other two").isNotEmpty()
        .allSatisfy(r -> assertThat(r.error()).as(r.id()).isNull());
    everyTeamsUsageIsWhatItsClientsWereAnswered(failed);
  }

  void everyTeamsUsageIsWhatItsClientsWereAnswered() {
    everyTeamsUsageIsWhatItsClientsWereAnswered(List.of());
  }

  /**
   * Each team's usage in Redis is what its clients were answered, plus at most one answer's worth for
   * each of its requests a killed replica cut: the replica may have settled such a request (the
   * cloud had answered it) in the moment before it died, with the last bytes never reaching the client.
   */
  void everyTeamsUsageIsWhatItsClientsWereAnswered(List<Result> cutByAKill) {
    Map<String, Long> expected = FleetLoad.answeredTokens(answered);
    Map<String, Long> largestAnswer = new TreeMap<>();
    answered.stream().filter(Result::ok).forEach(r -> largestAnswer.merge(r.team(), r.tokens(), Math::max));
    Map<String, Long> allowance = new TreeMap<>();
    cutByAKill.forEach(r -> allowance.merge(r.team(), largestAnswer.getOrDefault(r.team(), 0L), Long::sum));
    ReplicaProcess any = alive().get(0);
    await("every team's usage in Redis equals what its clients were answered").atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(250))
        .untilAsserted(() -> {
          JsonNode teams = JSON.readTree(any.get("/admin/quota", ADMIN_TOKEN).body()).path("teams");
          for (Map.Entry<String, Long> team : expected.entrySet()) {
            long used = teams.path(team.getKey()).path("used").asLong();
            assertThat(used).as("team %s", team.getKey())
                .isBetween(team.getValue(), team.getValue() + allowance.getOrDefault(team.getKey(), 0L));
          }
        });
  }
}
