package io.spillway.app.local;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.Gateway;
import io.spillway.config.ConfigLoader;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.LocalPool;
import io.spillway.local.pool.PooledServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two GPU boxes under {@code local.servers}, through the real gateway with its breaker forced open
 * (every request local): requests spread by least outstanding, a box with the model loaded is
 * preferred, a box without the model is never chosen, a box that dies mid-load loses only its own
 * in-flight requests and rejoins once it answers again, and a box that answers 5xx is taken out by
 * its breaker and let back through a trial request.
 */
class LocalServersTest {
  static final String KEY = "sk-gold-team-key";
  static final String ADMIN = "admin-secret-token";
  static final String QWEN = "qwen2.5-coder:7b";
  static final String LLAMA = "llama3.2:3b";

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  final ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
  final WireMockServer cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
  final List<GpuBox> boxes = new ArrayList<>();
  Gateway gateway;

  @AfterEach
  void tearDown() {
    if (gateway != null) {
      gateway.close();
    }
    boxes.forEach(GpuBox::close);
    cloud.stop();
    clients.shutdownNow();
  }

  GpuBox box(GpuBox box) {
    boxes.add(box);
    return box;
  }

  /** Starts the gateway with the boxes as {@code local.servers}, everything sent local, every box checked. */
  void startGateway(String extraLocalYaml) {
    cloud.start();
    StringBuilder servers = new StringBuilder();
    boxes.forEach(b -> servers.append(b.serverYaml()));
    String yaml = """
        server: { host: 127.0.0.1, port: 0, drainTimeout: 2s }
        admin: { token: %s }
        cloud: { baseUrl: %s/v1, apiKey: sk-cloud, timeout: 5s }
        local:
          kind: ollama
          checkEvery: 1s
          models:
            default: %s
            gpt-4o-mini: %s
        %s
          servers:
        %s
        keys:
          - { key: %s, team: release, tier: gold }
        store: memory
        """.formatted(ADMIN, cloud.baseUrl(), QWEN, LLAMA, extraLocalYaml.indent(2).stripTrailing(), servers, KEY);
    gateway = Gateway.start(new ConfigLoader(Map.<String, String>of()::get).parse("test config", yaml), clock);
    HttpResponse<String> forced = send(HttpRequest.newBuilder(URI.create(url("/admin/breaker")))
        .header("Authorization", "Bearer " + ADMIN).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"state\":\"open\"}")).build());
    assertThat(forced.statusCode()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(10)).until(() -> pool().servers().stream()
        .allMatch(s -> s.backend().readiness().checked()
            && (!s.backend().readiness().keepWarm() || s.backend().readiness().lastWarmAt() != null)));
  }

  LocalPool pool() {
    return gateway.local();
  }

  PooledServer server(String name) {
    return pool().servers().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
  }

  String url(String path) {
    return "http://127.0.0.1:" + gateway.port() + path;
  }

  HttpResponse<String> chat(String model, boolean stream) {
    return send(HttpRequest.newBuilder(URI.create(url("/v1/chat/completions"))).timeout(Duration.ofSeconds(20))
        .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + model + "\",\"stream\":" + stream
            + ",\"messages\":[{\"role\":\"user\",\"content\":\"Write a haiku about rivers\"}]}")).build());
  }

  HttpResponse<String> send(HttpRequest request) {
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  List<HttpResponse<String>> concurrently(int count, Function<Integer, HttpResponse<String>> request) {
    List<CompletableFuture<HttpResponse<String>>> futures = IntStream.range(0, count)
        .mapToObj(i -> CompletableFuture.supplyAsync(() -> request.apply(i), clients)).toList();
    return futures.stream().map(CompletableFuture::join).toList();
  }

  /** A whole answer: a buffered completion, or a stream that ended with [DONE] and no error event. */
  static boolean complete(HttpResponse<String> response) {
    return response.statusCode() == 200 && !response.body().contains("\"error\"")
        && (!response.body().startsWith("data:") || response.body().contains("data: [DONE]"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"ollama", "openai"})
  void fortyConcurrentRequestsAreSpreadOverBothBoxesByLeastOutstanding(String kind) {
    GpuBox a = box(kind.equals("ollama") ? GpuBox.ollama("gpu-a", List.of(QWEN, LLAMA), List.of(QWEN), 400)
        : GpuBox.openai("gpu-a", List.of(QWEN, LLAMA), 400));
    GpuBox b = box(kind.equals("ollama") ? GpuBox.ollama("gpu-b", List.of(QWEN, LLAMA), List.of(QWEN), 400)
        : GpuBox.openai("gpu-b", List.of(QWEN, LLAMA), 400));
    startGateway("");

    List<HttpResponse<String>> answers = concurrently(40, i -> chat("gpt-4o", i % 2 == 0));

    assertThat(answers).allMatch(LocalServersTest::complete);
    assertThat(a.chats() + b.chats()).isEqualTo(40);
    // Least outstanding keeps both boxes busy: neither gets fewer than a third of the load.
    assertThat(a.chats()).isBetween(14, 26);
    assertThat(b.chats()).isBetween(14, 26);
    await().atMost(Duration.ofSeconds(5)).until(() -> server("gpu-a").outstanding() == 0
        && server("gpu-b").outstanding() == 0);
  }

  @Test
  void aBoxWithTheModelLoadedIsPreferred() throws IOException {
    GpuBox a = box(GpuBox.ollama("gpu-a", List.of(QWEN, LLAMA), List.of(), 0));
    GpuBox b = box(GpuBox.ollama("gpu-b", List.of(QWEN, LLAMA), List.of(LLAMA), 0));
    startGateway("");
    // The start-up keep-warm loaded every model on both; Ollama has since unloaded qwen from gpu-b.
    b.running(List.of(LLAMA));
    a.running(List.of(QWEN, LLAMA));
    pool().checkNow();

    for (int i = 0; i < 6; i++) {
      assertThat(chat("gpt-4o", false).body()).contains("Served by gpu-a");
    }

    assertThat(a.chatsFor(QWEN)).isEqualTo(6);
    assertThat(b.chatsFor(QWEN)).isZero();
    JsonNode status = Json.parse(send(HttpRequest.newBuilder(URI.create(url("/admin/status")))
        .header("Authorization", "Bearer " + ADMIN).GET().build()).body()).path("local");
    assertThat(status.path("servers").get(1).path("name").asText()).isEqualTo("gpu-b");
    assertThat(status.path("servers").get(1).path("loaded").toString()).isEqualTo("[\"" + LLAMA + "\"]");
    assertThat(status.path("servers").get(1).path("baseUrl").asText()).isEqualTo(b.baseUrl());
  }

  @ParameterizedTest
  @ValueSource(strings = {"ollama", "openai"})
  void aBoxWithoutTheModelIsNeverChosen(String kind) {
    GpuBox a = box(kind.equals("ollama") ? GpuBox.ollama("gpu-a", List.of(QWEN), List.of(QWEN), 0)
        : GpuBox.openai("gpu-a", List.of(QWEN), 0));
    GpuBox b = box(kind.equals("ollama") ? GpuBox.ollama("gpu-b", List.of(QWEN, LLAMA), List.of(QWEN), 0)
        : GpuBox.openai("gpu-b", List.of(QWEN, LLAMA), 0));
    startGateway("");

    List<HttpResponse<String>> answers = concurrently(10, i -> chat("gpt-4o-mini", false));

    assertThat(answers).allMatch(LocalServersTest::complete);
    assertThat(b.chatsFor(LLAMA)).isEqualTo(10);
    assertThat(a.chats()).isZero();
    assertThat(server("gpu-a").backend().readiness().missingModels()).containsExactly(LLAMA);
  }

  @Test
  void aBoxKilledMidLoadLosesOnlyItsOwnStreamsAndRejoinsOnceItAnswers() {
    GpuBox a = box(GpuBox.ollama("gpu-a", List.of(QWEN, LLAMA), List.of(QWEN), 3000));
    GpuBox b = box(GpuBox.ollama("gpu-b", List.of(QWEN, LLAMA), List.of(QWEN), 3000));
    // A stream cut off by the dead box ends within local.timeout (the wait for its next event), not the client's.
    startGateway("timeout: 5s\nserverBreaker: { window: 4, waitInOpen: 10s, halfOpenCalls: 1 }");

    List<CompletableFuture<HttpResponse<String>>> inFlight = IntStream.range(0, 10)
        .mapToObj(i -> CompletableFuture.supplyAsync(() -> chat("gpt-4o", true), clients)).toList();
    await().atMost(Duration.ofSeconds(10)).until(() -> server("gpu-a").outstanding() > 0
        && server("gpu-b").outstanding() > 0);
    a.kill();

    List<HttpResponse<String>> first = inFlight.stream().map(CompletableFuture::join).toList();
    int onB = b.chats();
    assertThat(first.stream().filter(r -> r.body().contains("gpu-b")))
        .as("every stream on the surviving box completes").hasSize(onB).allMatch(LocalServersTest::complete);
    assertThat(first.stream().filter(r -> !complete(r)).count())
        .as("only streams that were on the dead box fail").isLessThanOrEqualTo(first.size() - onB);

    List<HttpResponse<String>> after = concurrently(10, i -> chat("gpt-4o", i % 2 == 0));
    assertThat(after).as("new requests go to the survivor").allMatch(LocalServersTest::complete);
    assertThat(pool().ready()).isTrue();
    // Out of the selection: its breaker opened on the broken streams, or a refused connection marked it unreachable.
    assertThat(!server("gpu-a").backend().ready() || server("gpu-a").breakerState().equals("open"))
        .as(() -> server("gpu-a").toJson(true).toString()).isTrue();

    a.restart();
    clock.advance(Duration.ofSeconds(11));
    await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(server("gpu-a").backend().ready())
        .as(() -> server("gpu-a").toJson(true).toString()).isTrue());
    List<HttpResponse<String>> rejoined = concurrently(6, i -> chat("gpt-4o", false));
    assertThat(rejoined).allMatch(LocalServersTest::complete);
    assertThat(a.chats()).as("the box is back in the selection").isPositive();
    assertThat(server("gpu-a").breakerState()).isEqualTo("closed");
  }

  @Test
  void aBoxAnswering5xxIsTakenOutByItsBreakerAndLetBackThroughATrialRequest() {
    GpuBox a = box(GpuBox.ollama("gpu-a", List.of(QWEN, LLAMA), List.of(QWEN), 0));
    GpuBox b = box(GpuBox.ollama("gpu-b", List.of(QWEN, LLAMA), List.of(QWEN), 0));
    startGateway("serverBreaker: { failureRateThreshold: 50, window: 4, waitInOpen: 30s, halfOpenCalls: 1 }");
    a.failChats(500);

    for (int i = 0; i < 12; i++) {
      chat("gpt-4o", false);
    }
    assertThat(server("gpu-a").breakerState()).isEqualTo("open");
    int failedOnA = a.chats();
    assertThat(failedOnA).isEqualTo(4);
    for (int i = 0; i < 10; i++) {
      assertThat(chat("gpt-4o", i % 2 == 0).statusCode()).isEqualTo(200);
    }
    assertThat(a.chats()).as("no new requests while open").isEqualTo(failedOnA);
    HttpResponse<String> metrics = send(HttpRequest.newBuilder(URI.create(url("/metrics")))
        .header("Authorization", "Bearer " + ADMIN).GET().build());
    assertThat(metrics.body()).contains("spillway_local_server_breaker{server=\"gpu-a\"} 2.0")
        .contains("spillway_local_server_outstanding{server=\"gpu-b\"}");

    a.healChats();
    clock.advance(Duration.ofSeconds(31));
    for (int i = 0; i < 4; i++) {
      assertThat(chat("gpt-4o", false).statusCode()).isEqualTo(200);
    }
    assertThat(a.chats()).as("a trial request reached the box, then more").isGreaterThan(1);
    assertThat(server("gpu-a").breakerState()).isEqualTo("closed");
  }

  @Test
  void readyzStaysReadyWhileOneBoxIsAndListsEachBox() throws IOException {
    GpuBox a = box(GpuBox.ollama("gpu-a", List.of(QWEN), List.of(QWEN), 0));
    box(GpuBox.ollama("gpu-b", List.of(QWEN), List.of(QWEN), 0));
    startGateway("");
    a.kill();
    pool().checkNow();

    HttpResponse<String> readyz = send(HttpRequest.newBuilder(URI.create(url("/readyz"))).GET().build());

    assertThat(readyz.statusCode()).isEqualTo(200);
    JsonNode local = Json.parse(readyz.body()).path("local");
    assertThat(local.path("ready").asBoolean()).isTrue();
    assertThat(local.path("servers").get(0).path("ready").asBoolean()).isFalse();
    assertThat(local.path("servers").get(0).path("breaker").asText()).isEqualTo("closed");
    assertThat(local.path("servers").get(1).path("ready").asBoolean()).isTrue();
    assertThat(local.path("servers").get(1).has("baseUrl")).as("no addresses on /readyz").isFalse();
    assertThat(local.path("problems").toString()).contains("server gpu-a: ");
  }
}
