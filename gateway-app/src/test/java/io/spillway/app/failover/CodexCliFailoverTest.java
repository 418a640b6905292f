package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.failover.AgentModelStubs.assistantToolCalls;
import static io.spillway.app.failover.AgentModelStubs.cloudTextStream;
import static io.spillway.app.failover.AgentModelStubs.offersTools;
import static io.spillway.app.failover.AgentModelStubs.ollamaAgent;
import static io.spillway.app.failover.AgentModelStubs.ollamaChats;
import static io.spillway.app.failover.AgentModelStubs.toolOutputs;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.deploy.RepositoryFiles;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.CodexCli;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real Codex CLI ({@code codex exec}, configured with the {@code config.toml} of
 * docs/clients.md) through the real gateway, with a team whose only key is silver (or bronze): while
 * the cloud answers "Selected model is at capacity", Codex completes a task on the local backend (a
 * stand-in Ollama that asks for a shell command, then for a file edit with Codex's apply_patch tool,
 * then answers); once {@code failover.localFor} has passed on the gateway's clock and the cloud has
 * recovered, the next Codex run is served by the cloud.
 *
 * <p>Needs Codex installed (see {@link CodexCli}); skipped with the reason otherwise, except in CI.
 */
class CodexCliFailoverTest {
  static final String DOC_BASE_URL = "http://127.0.0.1:8080/v1";
  static final String MODEL = "gpt-5.5";
  /** How a request from Codex is told apart: it offers its shell tool. */
  static final String CODEX_TOOL = "\"name\":\"exec_command\"";
  /** Writes a file and prints a line that the command's own text does not contain. */
  static final String COMMAND = "echo spillway-tool-ok | tr a-z A-Z | tee out.txt";
  static final String COMMAND_OUTPUT = "SPILLWAY-TOOL-OK";
  /** A patch in the format of Codex's apply_patch tool: adds a file. */
  static final String PATCH = "*** Begin Patch\n*** Add File: notes.md\n+edited by apply_patch\n*** End Patch\n";
  static final String LOCAL_FINAL = "Done on the local model: out.txt holds the marker, notes.md is added.";
  static final String LOCAL_PLAIN = "Plain answer from the local model.";
  static final String CLOUD_FINAL = "Back on the cloud model, hello.";
  static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
  static final Pattern ANY_REQUEST_ID = Pattern.compile("req_[0-9a-f]+");
  /** Codex's own retries off: one failed call fails the run, so exit 0 means zero failed calls. */
  static final String[] NO_RETRIES = {
      "model_providers.spillway.request_max_retries=0", "model_providers.spillway.stream_max_retries=0"};

  @ParameterizedTest(name = "only {0} keys")
  @ValueSource(strings = {"silver", "bronze"})
  @Timeout(300)
  void codexRunsCommandsAndEditsFilesOnLocalWhileTheCloudIsAtCapacityAndIsBackOnTheCloudAfterLocalFor(String tier)
      throws IOException {
    String key = "sk-codex-" + tier + "-team-key";
    String config = """
        keys:
          - { key: %s, team: codex-%s, tier: %s }
        """.formatted(key, tier, tier);
    try (LogCapture logs = new LogCapture();
        CodexCli codex = CodexCli.locate();
        GatewayHarness h = GatewayHarness.start(config)) {
      codex.configure(clientsDocConfigToml().replace(DOC_BASE_URL, h.baseUrl()));
      Map<String, String> env = Map.of("SPILLWAY_KEY", key);
      h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.atCapacity()));
      ollamaAgent(h.ollama, COMMAND, PATCH, LOCAL_FINAL, LOCAL_PLAIN);

      // The team's other traffic has already had two capacity answers: Codex's first turn is the third.
      for (int i = 0; i < 2; i++) {
        HttpResponse<String> earlier = h.post("/v1/responses", key,
            "{\"model\":\"" + MODEL + "\",\"stream\":true,\"input\":\"Summarise the build log\"}");
        assertThat(earlier.statusCode()).as(earlier.body()).isEqualTo(200);
        assertThat(earlier.headers().firstValue("x-spillway-backend")).hasValue("local");
      }

      Path workdir = codex.newWorkdir("at-capacity");
      CodexCli.Run atCapacity = codex.exec(workdir, env, RUN_TIMEOUT, MODEL,
          "Write the marker into out.txt with a shell command, add notes.md with a patch, then say what you did.",
          NO_RETRIES);

      assertThat(atCapacity.exitCode()).as(atCapacity.describe()).isZero();
      assertThat(atCapacity.lastMessage()).as(atCapacity.describe()).contains(LOCAL_FINAL);
      assertThat(workdir.resolve("out.txt")).as("Codex ran the command the local model asked for")
          .content().isEqualToIgnoringNewLines(COMMAND_OUTPUT);
      assertThat(workdir.resolve("notes.md")).as("Codex applied the patch the local model sent")
          .content().isEqualToIgnoringNewLines("edited by apply_patch");
      List<JsonNode> turns = ollamaChats(h.ollama).stream().filter(AgentModelStubs::offersTools).toList();
      assertThat(turns).as("Codex's turns as the local model saw them\n" + atCapacity.describe()).hasSize(3);
      assertThat(toolOutputs(turns.get(0))).isEmpty();
      assertThat(assistantToolCalls(turns.get(1))).as("the call travels back with its output")
          .containsExactly("exec_command");
      assertThat(toolOutputs(turns.get(1))).as("the command's output, sent back by Codex").singleElement()
          .asString().contains(COMMAND_OUTPUT);
      assertThat(assistantToolCalls(turns.get(2))).containsExactly("exec_command", "apply_patch");
      assertThat(toolOutputs(turns.get(2))).as("apply_patch's result, sent back by Codex").hasSize(2)
          .last().asString().contains("notes.md");

      List<LoggedRequest> cloudCalls = h.cloud.findAll(postRequestedFor(urlEqualTo("/v1/responses")));
      assertThat(cloudCalls).as("two earlier requests and Codex's first turn; the breaker kept the others")
          .hasSize(3);
      assertThat(cloudCalls.get(2).getBodyAsString()).as("Codex's first turn").contains(CODEX_TOOL);
      assertThat(breaker(h).get("state").asText()).isEqualTo("open");
      // Zero failed calls: Codex (its retries off) exited 0, the local model saw each turn once, and
      // every request was answered 200 by local. Codex hangs up as soon as it reads
      // response.completed; a stream whose last event was relayed is a success all the same.
      List<JsonNode> served = awaitResponsesLines(logs, 5);
      assertThat(served).as("every /v1/responses request was served by local, none failed")
          .allSatisfy(line -> {
            assertThat(line.get("backend").asText()).isEqualTo("local");
            assertThat(line.get("status").asInt()).isEqualTo(200);
            assertThat(line.get("outcome").asText()).isEqualTo("success");
            assertThat(line.path("error").isMissingNode() || line.path("error").isNull()).isTrue();
            assertThat(line.get("tier").asText()).isEqualTo(tier);
          });

      // Codex prints no headers; what `curl -i` shows for the same turn is what docs/clients.md promises.
      HttpResponse<String> sameTurn = h.post("/v1/responses", key, codexFixture("first-turn.json"));
      assertThat(sameTurn.statusCode()).as(sameTurn.body()).isEqualTo(200);
      String doc = Files.readString(RepositoryFiles.root().resolve("docs/clients.md"));
      for (String header : List.of("content-type", "x-spillway-backend", "x-spillway-degraded",
          "x-spillway-dropped-params")) {
        String line = header + ": " + sameTurn.headers().firstValue(header).orElse("<absent>");
        assertThat(doc).as("docs/clients.md shows what a Codex turn on local gets").contains(line);
      }
      assertThat(sameTurn.headers().firstValue("x-spillway-backend")).hasValue("local");
      awaitResponsesLines(logs, 6);

      h.clock.advance(h.gateway().config().failover().localFor().plusSeconds(1));
      h.cloud.resetAll();
      h.cloud.stubFor(post("/v1/responses").willReturn(cloudTextStream(MODEL, CLOUD_FINAL)));
      int localCallsBefore = ollamaChats(h.ollama).size();

      CodexCli.Run recovered = codex.exec(codex.newWorkdir("recovered"), env, RUN_TIMEOUT, MODEL,
          "Say hello.", NO_RETRIES);

      assertThat(recovered.exitCode()).as(recovered.describe()).isZero();
      assertThat(recovered.lastMessage()).as(recovered.describe()).contains(CLOUD_FINAL);
      h.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/responses"))
          .withHeader("Authorization", equalTo("Bearer " + GatewayHarness.CLOUD_KEY))
          .withRequestBody(containing(CODEX_TOOL)));
      assertThat(ollamaChats(h.ollama)).as("nothing more went local").hasSize(localCallsBefore);
      assertThat(breaker(h).get("state").asText()).as("the probe closed the breaker").isEqualTo("closed");
      JsonNode probe = awaitResponsesLines(logs, 7).get(6);
      assertThat(probe.get("backend").asText()).isEqualTo("cloud");
      assertThat(probe.get("status").asInt()).isEqualTo(200);
      assertThat(probe.get("outcome").asText()).isEqualTo("success");
    }
  }

  @Test
  @Timeout(120)
  void whenNeitherBackendCanServeCodexPrintsSpillwaysErrorMessage() throws IOException {
    String key = "sk-codex-silver-team-key";
    String config = """
        local:
          enabled: false
        keys:
          - { key: %s, team: codex-silver, tier: silver }
        """.formatted(key);
    try (CodexCli codex = CodexCli.locate(); GatewayHarness h = GatewayHarness.start(config)) {
      codex.configure(clientsDocConfigToml().replace(DOC_BASE_URL, h.baseUrl()));
      h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.atCapacity()));

      CodexCli.Run run = codex.exec(codex.newWorkdir("unavailable"), Map.of("SPILLWAY_KEY", key), RUN_TIMEOUT,
          MODEL, "Say hello.", NO_RETRIES);

      assertThat(run.timedOut()).as(run.describe()).isFalse();
      assertThat(run.exitCode()).as(run.describe()).isNotZero();
      String error = run.stderr().lines().filter(l -> l.startsWith("ERROR: unexpected status 503")).findFirst()
          .orElseThrow(() -> new AssertionError("no 503 error line\n" + run.describe()));
      assertThat(error).contains("local.enabled: false");
      String doc = Files.readString(RepositoryFiles.root().resolve("docs/clients.md"));
      assertThat(ANY_REQUEST_ID.matcher(doc).replaceAll("req_"))
          .as("docs/clients.md shows the line Codex prints, but for the port and the request id")
          .contains(ANY_REQUEST_ID.matcher(error.replace(h.baseUrl(), DOC_BASE_URL)).replaceAll("req_"));
    }
  }

  @Test
  void ciInstallsTheCodexVersionTheDocsWereCheckedWith() throws IOException {
    Path root = RepositoryFiles.root();
    assertThat(Files.readString(root.resolve(".ci/run"))).contains("codex_version=" + CodexCli.PINNED_VERSION);
    assertThat(Files.readString(root.resolve("docs/clients.md"))).contains("`@openai/codex` " + CodexCli.PINNED_VERSION);
    assertThat(Files.readString(root.resolve("README.md"))).contains("@openai/codex@" + CodexCli.PINNED_VERSION);
  }

  /** The {@code config.toml} that docs/clients.md tells Codex users to write: the test runs the doc. */
  static String clientsDocConfigToml() {
    Path doc = RepositoryFiles.root().resolve("docs/clients.md");
    try {
      Matcher toml = Pattern.compile("(?s)```toml\\n(.*?)```").matcher(Files.readString(doc));
      assertThat(toml.find()).as("docs/clients.md has a ```toml block").isTrue();
      String config = toml.group(1);
      assertThat(config).contains("wire_api = \"responses\"", "env_key = \"SPILLWAY_KEY\"", DOC_BASE_URL,
          "model = \"" + MODEL + "\"");
      return config;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A request body the real Codex CLI sent (captured in {@code fixtures/codex}). */
  static String codexFixture(String name) throws IOException {
    try (InputStream in = CodexCliFailoverTest.class.getResourceAsStream("/fixtures/codex/" + name)) {
      assertThat(in).as("fixture " + name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** The access log's {@code /v1/responses} lines, once there are {@code count} of them. */
  private static List<JsonNode> awaitResponsesLines(LogCapture logs, int count) {
    await("access log lines for /v1/responses").atMost(Duration.ofSeconds(10))
        .until(() -> responsesLines(logs).size() >= count);
    List<JsonNode> lines = responsesLines(logs);
    assertThat(lines).as("access log lines for /v1/responses").hasSize(count);
    return lines;
  }

  private static List<JsonNode> responsesLines(LogCapture logs) {
    return logs.accessLines().stream().map(CodexCliFailoverTest::parse)
        .filter(line -> "responses".equals(line.path("route").asText())).toList();
  }

  private static JsonNode parse(String line) {
    try {
      return Json.parse(line);
    } catch (IOException e) {
      throw new UncheckedIOException("access log line is not JSON: " + line, e);
    }
  }
}
