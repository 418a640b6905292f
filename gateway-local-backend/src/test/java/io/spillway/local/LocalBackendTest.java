package io.spillway.local;

import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.ollama.OllamaStubs;
import io.spillway.local.ollama.OllamaTesting;
import io.spillway.server.testing.EventLoopClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/** Readiness (server up, mapped models present) and keep-warm, driven by a fake clock. */
@ExtendWith(EventLoopClient.class)
class LocalBackendTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  LocalBackend local;

  @BeforeEach
  void setUp() {
    ollama.stubFor(get("/api/version").willReturn(OllamaStubs.version("0.12.6")));
    ollama.stubFor(post("/api/generate").willReturn(OllamaStubs.loaded("qwen2.5-coder:7b")));
    local = backend(OllamaTesting.config(ollama.baseUrl()));
    logs.start();
    ((Logger) LoggerFactory.getLogger(LocalBackend.class)).addAppender(logs);
  }

  @AfterEach
  void tearDown() {
    ((Logger) LoggerFactory.getLogger(LocalBackend.class)).detachAppender(logs);
    local.close();
    scheduler.shutdownNow();
  }

  LocalBackend backend(LocalConfig config) {
    return new LocalBackend(
        LocalBackends.server(config, OllamaTesting.cloud(), clock, meters, EventLoopClient.http()),
        config, clock, scheduler, meters);
  }

  @Test
  void readyBeforeTheFirstProbeSoTrafficIsNotRefusedWhileItRuns() {
    assertThat(local.readiness().checked()).isFalse();
    assertThat(local.ready()).isTrue();
  }

  @Test
  void probeReportsVersionAndEveryMappedModelPresent() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b", "mistral:latest")));

    LocalReadiness readiness = local.checkNow();

    assertThat(readiness.reachable()).isTrue();
    assertThat(readiness.version()).isEqualTo("0.12.6");
    assertThat(readiness.missing()).isEmpty();
    assertThat(readiness.checkedAt()).isEqualTo(clock.instant());
    assertThat(local.ready()).isTrue();
    assertThat(meters.get("spillway.local.ready").gauge().value()).isEqualTo(1.0);
  }

  @Test
  void aMissingModelIsReportedWithTheFixAndLoggedOncePerChange() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b")));

    local.checkNow();
    local.checkNow();

    LocalReadiness readiness = local.readiness();
    assertThat(readiness.missing()).containsExactly(
        new LocalReadiness.MissingModel("llama3.2:3b", "ollama pull llama3.2:3b"));
    assertThat(readiness.problems()).anySatisfy(p -> assertThat(p).contains("ollama pull llama3.2:3b"));
    assertThat(local.ready()).as("the default model is there").isTrue();
    JsonNode json = readiness.toJson(false);
    assertThat(json.path("missing").toString())
        .isEqualTo("[{\"model\":\"llama3.2:3b\",\"fix\":\"ollama pull llama3.2:3b\"}]");
    assertThat(json.has("baseUrl")).isFalse();
    assertThat(readiness.toJson(true).path("baseUrl").asText()).isEqualTo(ollama.baseUrl());
    assertThat(warnings()).filteredOn(m -> m.contains("llama3.2:3b")).hasSize(1);
    assertThat(meters.get("spillway.local.models.missing").gauge().value()).isEqualTo(1.0);

    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    local.checkNow();

    assertThat(local.readiness().missing()).isEmpty();
    assertThat(logs.list).anySatisfy(e -> assertThat(e.getFormattedMessage()).contains("every mapped model is present"));
  }

  @Test
  void aMissingDefaultModelMakesTheBackendNotReady() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("llama3.2:3b")));

    local.checkNow();

    assertThat(local.ready()).isFalse();
    assertThat(local.readiness().toJson(false).path("ready").asBoolean()).isFalse();
  }

  @Test
  void namesWithoutATagMatchLatest() {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "llama3");
    LocalBackend untagged = backend(new LocalConfig(true, LocalConfig.Kind.OLLAMA, ollama.baseUrl(), models, null, null, null, null));
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("llama3:latest")));

    assertThat(untagged.checkNow().missing()).isEmpty();
  }

  @Test
  void anUnreachableServerIsNotReadyAndSaysWhatToCheck() throws IOException {
    LocalBackend nowhere = backend(OllamaTesting.config("http://127.0.0.1:" + closedPort()));

    LocalReadiness readiness = nowhere.checkNow();

    assertThat(readiness.reachable()).isFalse();
    assertThat(nowhere.ready()).isFalse();
    assertThat(readiness.problems()).singleElement().asString().contains("ollama serve").contains("local.baseUrl");
    assertThat(meters.get("spillway.local.checks").tag("result", "unreachable").counter().count()).isEqualTo(1.0);
  }

  @Test
  void aCallThatCannotConnectMarksTheBackendUnreachableAtOnce() throws IOException {
    LocalBackend nowhere = backend(OllamaTesting.config("http://127.0.0.1:" + closedPort()));

    assertThatThrownBy(() -> Blocking.await(nowhere.callAsync(OllamaTesting.request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))))
        .isInstanceOf(UpstreamException.class);

    assertThat(nowhere.ready()).isFalse();
    assertThat(warnings()).anySatisfy(m -> assertThat(m).contains("unreachable"));
  }

  @Test
  void keepWarmLoadsEveryPresentMappedModelWithKeepAliveLongerThanTheInterval() throws IOException {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    local.checkNow();

    local.warmNow();

    List<JsonNode> loads = generateBodies();
    assertThat(loads).extracting(b -> b.path("model").asText()).containsExactly("qwen2.5-coder:7b", "llama3.2:3b");
    assertThat(loads).allSatisfy(body -> assertThat(body.toString()).isEqualTo(
        "{\"model\":\"" + body.path("model").asText() + "\",\"prompt\":\"\",\"stream\":false,\"keep_alive\":\"1200s\","
            + "\"options\":{\"num_ctx\":32768}}"));
    assertThat(local.readiness().lastWarmAt()).isEqualTo(clock.instant());
    assertThat(local.readiness().warmError()).isNull();
  }

  @Test
  void keepWarmSkipsMissingModels() throws IOException {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b")));
    local.checkNow();

    local.warmNow();

    assertThat(generateBodies()).extracting(b -> b.path("model").asText()).containsExactly("qwen2.5-coder:7b");
  }

  @Test
  void anEmbeddingOnlyModelIsKeptWarmThroughTheEmbeddingsEndpoint() throws IOException {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "qwen2.5-coder:7b");
    models.put("text-embedding-3-small", "nomic-embed-text");
    local.close();
    local = backend(new LocalConfig(true, LocalConfig.Kind.OLLAMA, ollama.baseUrl(), models, Duration.ofMinutes(15),
        Duration.ofMinutes(1), Duration.ofSeconds(10), null));
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "nomic-embed-text:latest")));
    ollama.stubFor(post("/api/generate").withRequestBody(containing("nomic-embed-text"))
        .willReturn(OllamaStubs.error(400, "\"nomic-embed-text\" does not support generate")));
    ollama.stubFor(post("/api/embed")
        .willReturn(OllamaStubs.json(200, "{\"model\":\"nomic-embed-text\",\"embeddings\":[]}")));
    local.checkNow();

    local.warmNow();
    local.warmNow();

    assertThat(local.readiness().warmError()).as("keep-warm reports no error").isNull();
    List<JsonNode> embeds = new java.util.ArrayList<>();
    for (var request : ollama.findAll(postRequestedFor(urlEqualTo("/api/embed")))) {
      embeds.add(Json.parse(request.getBodyAsString()));
    }
    assertThat(embeds).hasSize(2).allSatisfy(body -> {
      assertThat(body.path("model").asText()).isEqualTo("nomic-embed-text");
      assertThat(body.path("input").asText()).isEmpty();
      assertThat(body.has("keep_alive")).isTrue();
    });
    assertThat(generateBodies()).extracting(b -> b.path("model").asText())
        .as("the refusal is learned once; the chat model is still loaded by generate")
        .containsExactly("qwen2.5-coder:7b", "nomic-embed-text", "qwen2.5-coder:7b");
  }

  @Test
  void anotherRefusalOfTheLoadIsStillAKeepWarmError() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    ollama.stubFor(post("/api/generate").willReturn(OllamaStubs.error(400, "invalid options")));
    local.checkNow();

    local.warmNow();

    assertThat(local.readiness().warmError()).contains("invalid options");
    assertThat(ollama.findAll(postRequestedFor(urlEqualTo("/api/embed")))).isEmpty();
  }

  @Test
  void aFailedKeepWarmIsReported() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    ollama.stubFor(post("/api/generate").willReturn(OllamaStubs.error(500, "llama runner process has terminated")));
    local.checkNow();

    local.warmNow();

    assertThat(local.readiness().warmError()).contains("llama runner process has terminated");
    assertThat(warnings()).anySatisfy(m -> assertThat(m).contains("keep-warm failed"));
  }

  @Test
  void theScheduleFollowsTheClock() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));

    local.tick();
    assertThat(probes()).isEqualTo(1);
    assertThat(loads()).isEqualTo(2);

    clock.advance(Duration.ofSeconds(59));
    local.tick();
    assertThat(probes()).isEqualTo(1);

    clock.advance(Duration.ofSeconds(1));
    local.tick();
    assertThat(probes()).isEqualTo(2);
    assertThat(loads()).isEqualTo(2);

    clock.advance(Duration.ofMinutes(14));
    local.tick();
    assertThat(probes()).isEqualTo(3);
    assertThat(loads()).as("15 minutes after the first round").isEqualTo(4);
  }

  @Test
  void warmUpLoadsTheModelsAtOnceInTheBackground() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    local.checkNow();

    local.warmUp();

    await().atMost(Duration.ofSeconds(10)).until(() -> loads() == 2);
  }

  @Test
  void aServerThatComesBackIsWarmedAtOnce() {
    ollama.stubFor(get("/api/version").willReturn(
        com.github.tomakehurst.wiremock.client.WireMock.aResponse()
            .withFault(com.github.tomakehurst.wiremock.http.Fault.CONNECTION_RESET_BY_PEER)));
    local.checkNow();
    assertThat(local.ready()).isFalse();

    ollama.stubFor(get("/api/version").willReturn(OllamaStubs.version("0.12.6")));
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    local.checkNow();

    await().atMost(Duration.ofSeconds(10)).until(() -> loads() == 2);
  }

  @Test
  void aModelThatAppearsIsWarmedAtOnceButTheFirstProbeLeavesWarmingToTheSchedule() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b")));
    local.checkNow();
    assertThat(loads()).isZero();

    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    local.checkNow();

    await().atMost(Duration.ofSeconds(10)).until(() -> loads() == 2);
  }

  @Test
  void startRunsTheFirstProbeAndKeepWarmRoundRightAway() {
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));

    local.start();

    await().atMost(Duration.ofSeconds(10)).until(() -> local.readiness().checked() && loads() == 2);
    assertThat(local.readiness().version()).isEqualTo("0.12.6");
  }

  @Test
  void tickIntervalIsATenthOfTheShorterPeriodWithinBounds() {
    assertThat(LocalBackend.tickInterval(OllamaTesting.config("http://x"))).isEqualTo(Duration.ofSeconds(6));
    Map<String, String> models = Map.of("default", "m");
    assertThat(LocalBackend.tickInterval(new LocalConfig(null, null, null, models, Duration.ofSeconds(2),
        Duration.ofSeconds(1), null, null))).isEqualTo(Duration.ofMillis(100));
    assertThat(LocalBackend.tickInterval(new LocalConfig(null, null, null, models, Duration.ofHours(2),
        Duration.ofHours(1), null, null))).isEqualTo(Duration.ofSeconds(10));
  }

  private int probes() {
    return ollama.findAll(getRequestedFor(urlEqualTo("/api/version"))).size();
  }

  private int loads() {
    return ollama.findAll(postRequestedFor(urlEqualTo("/api/generate"))).size();
  }

  private List<JsonNode> generateBodies() throws IOException {
    List<JsonNode> out = new java.util.ArrayList<>();
    for (var request : ollama.findAll(postRequestedFor(urlEqualTo("/api/generate")))) {
      out.add(Json.parse(request.getBodyAsString()));
    }
    return out;
  }

  private List<String> warnings() {
    return logs.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage).toList();
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
