package io.spillway.app.anthropic;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static io.spillway.app.anthropic.AnthropicStubs.ollamaChats;
import static io.spillway.app.anthropic.AnthropicStubs.parse;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.deploy.RepositoryFiles;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.ClaudeCodeCli;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The real Claude Code CLI ({@code claude -p}, with the environment of docs/clients.md) through the
 * real gateway, with a team whose only key is silver (or bronze): a healthy Anthropic cloud (a
 * stand-in) answers a run; then it answers {@code 529 overloaded_error}, the route's breaker opens,
 * and a stand-in Ollama serves a run in which Claude Code runs its Bash tool (the model asks for a
 * command, Claude Code runs it and sends the result, the model answers); once
 * {@code failover.localFor} has passed on the gateway's clock, the next run is served by the cloud.
 *
 * <p>Needs Claude Code installed (see {@link ClaudeCodeCli}); skipped with the reason otherwise,
 * except in CI.
 */
class ClaudeCodeFailoverTest {
  static final String ANTHROPIC_KEY = "sk-ant-company-secret";
  static final String COMMAND = "echo spillway-tool-ok | tr a-z A-Z | tee out.txt";
  static final String COMMAND_OUTPUT = "SPILLWAY-TOOL-OK";
  static final String LOCAL_FINAL = "Done on the local model: out.txt holds the marker.";
  static final String LOCAL_PLAIN = "Plain answer from the local model.";
  static final String CLOUD_TEXT = "Hello from the cloud model.";
  static final String CLOUD_AGAIN = "Back on the cloud model.";
  static final Duration RUN_TIMEOUT = Duration.ofSeconds(120);
  /** How a request from Claude Code's agent is told apart: it offers its Bash tool. */
  static final String BASH_OFFERED = "$.tools[?(@.function.name == 'Bash')]";

  @ParameterizedTest(name = "only {0} keys")
  @ValueSource(strings = {"silver", "bronze"})
  @Timeout(400)
  void claudeCodeRunsItsBashToolOnLocalWhileAnthropicIsOverloadedAndIsBackOnTheCloudAfterLocalFor(String tier)
      throws IOException {
    String key = "sk-claude-" + tier + "-team-key";
    try (LogCapture logs = new LogCapture();
        ClaudeCodeCli claude = ClaudeCodeCli.locate();
        ClaudeRouteGateway gateway = ClaudeRouteGateway.claudeOnly(ANTHROPIC_KEY).start("""
            keys:
              - { key: %s, team: claude-%s, tier: %s }
            """.formatted(key, tier, tier))) {
      WireMockServer anthropic = gateway.anthropic;
      GatewayHarness h = gateway.h;
      String baseUrl = "http://127.0.0.1:" + h.gateway().port();
      anthropic.stubFor(post(urlPathEqualTo("/v1/messages")).willReturn(AnthropicStubs.messageStream(
          "claude-sonnet-4-5", CLOUD_TEXT)));

      ClaudeCodeCli.Run healthy = claude.print(claude.newWorkdir("healthy"), baseUrl, key, Map.of(), RUN_TIMEOUT,
          "Say hello.");

      assertThat(healthy.exitCode()).as(healthy.describe()).isZero();
      assertThat(result(healthy)).as(healthy.describe()).contains(CLOUD_TEXT);
      List<LoggedRequest> cloudTurns = anthropic.findAll(postRequestedFor(urlPathEqualTo("/v1/messages")));
      assertThat(cloudTurns).as(healthy.describe()).isNotEmpty();
      assertThat(cloudTurns).allSatisfy(r -> {
        assertThat(r.getHeader("x-api-key")).isEqualTo(ANTHROPIC_KEY);
        assertThat(r.containsHeader("anthropic-version")).isTrue();
      });
      keepFixture("healthy-turn.json", cloudTurns.get(cloudTurns.size() - 1).getBodyAsString());
      assertThat(ollamaChats(h.ollama)).as("the healthy cloud served every call").isEmpty();

      anthropic.resetAll();
      anthropic.stubFor(post(urlPathEqualTo("/v1/messages")).willReturn(AnthropicStubs.overloaded529()));
      AnthropicStubs.ollamaReady(h.ollama);
      AnthropicStubs.ollamaChat(h.ollama, 1, matchingJsonPath("$.messages[?(@.role == 'tool')]"),
          AnthropicStubs.textLines(LOCAL_FINAL));
      AnthropicStubs.ollamaChat(h.ollama, 3, matchingJsonPath(BASH_OFFERED), AnthropicStubs.toolCallLines("Bash",
          Json.object().put("command", COMMAND).put("description", "Write the marker")));
      AnthropicStubs.ollamaChat(h.ollama, 9, null, AnthropicStubs.textLines(LOCAL_PLAIN));
      // The team's other traffic has already had two overloaded answers: Claude Code's first call is the third.
      for (int i = 0; i < 2; i++) {
        HttpResponse<String> earlier = h.post("/v1/messages", null,
            "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
            "x-api-key", key);
        assertThat(earlier.statusCode()).as(earlier.body()).isEqualTo(200);
        assertThat(earlier.headers().firstValue("x-spillway-backend")).hasValue("local");
      }
      int servedBefore = messagesLines(logs).size();

      Path workdir = claude.newWorkdir("overloaded");
      ClaudeCodeCli.Run overloaded = claude.print(workdir, baseUrl, key, Map.of(), RUN_TIMEOUT,
          "Write the marker into out.txt with a shell command, then say what you did.");

      assertThat(overloaded.exitCode()).as(overloaded.describe()).isZero();
      assertThat(result(overloaded)).as(overloaded.describe()).contains(LOCAL_FINAL);
      assertThat(workdir.resolve("out.txt")).as("Claude Code ran the command the local model asked for\n"
          + overloaded.describe()).content().isEqualToIgnoringNewLines(COMMAND_OUTPUT);
      List<JsonNode> turns = ollamaChats(h.ollama).stream().filter(c -> c.path("tools").isArray()
          && c.toString().contains("\"Bash\"")).toList();
      assertThat(turns).as("Claude Code's agent turns as the local model saw them\n" + overloaded.describe())
          .hasSizeGreaterThanOrEqualTo(2);
      JsonNode last = turns.get(turns.size() - 1);
      JsonNode toolMessage = null;
      for (JsonNode message : last.path("messages")) {
        if ("tool".equals(message.path("role").asText())) {
          toolMessage = message;
        }
      }
      assertThat(toolMessage).as("the command's output, sent back by Claude Code").isNotNull();
      assertThat(toolMessage.path("content").asText()).contains(COMMAND_OUTPUT);
      assertThat(routeState(h)).isEqualTo("open");
      List<JsonNode> served = awaitMessagesLines(logs, servedBefore + 1);
      assertThat(served.subList(servedBefore, served.size())).as("zero failed calls: every Messages call of the run"
          + " was answered by local").allSatisfy(line -> {
            assertThat(line.get("status").asInt()).isEqualTo(200);
            assertThat(line.get("backend").asText()).isEqualTo("local");
            assertThat(line.get("tier").asText()).isEqualTo(tier);
          });

      h.clock.advance(h.gateway().config().failover().localFor().plusSeconds(1));
      anthropic.resetAll();
      anthropic.stubFor(post(urlPathEqualTo("/v1/messages")).willReturn(AnthropicStubs.messageStream(
          "claude-sonnet-4-5", CLOUD_AGAIN)));
      int localBefore = ollamaChats(h.ollama).size();

      ClaudeCodeCli.Run recovered = claude.print(claude.newWorkdir("recovered"), baseUrl, key, Map.of(),
          RUN_TIMEOUT, "Say hello.");

      assertThat(recovered.exitCode()).as(recovered.describe()).isZero();
      assertThat(result(recovered)).as(recovered.describe()).contains(CLOUD_AGAIN);
      anthropic.verify(postRequestedFor(urlPathEqualTo("/v1/messages")).withHeader("x-api-key", equalTo(ANTHROPIC_KEY)));
      assertThat(ollamaChats(h.ollama)).as("nothing more went local").hasSize(localBefore);
      assertThat(routeState(h)).as("the probe closed the breaker").isEqualTo("closed");
    }
  }

  @Test
  void ciInstallsTheClaudeCodeVersionTheDocsWereCheckedWith() throws IOException {
    Path root = RepositoryFiles.root();
    assertThat(Files.readString(root.resolve(".ci/run"))).contains("claude_version=" + ClaudeCodeCli.PINNED_VERSION);
    assertThat(Files.readString(root.resolve("docs/clients.md")))
        .contains("`@anthropic-ai/claude-code` " + ClaudeCodeCli.PINNED_VERSION);
  }

  /** The {@code result} of {@code claude -p --output-format json}. */
  private static String result(ClaudeCodeCli.Run run) {
    String out = run.stdout().strip();
    if (!out.startsWith("{")) {
      return out;
    }
    JsonNode json = parse(out);
    assertThat(json.path("is_error").asBoolean(false)).as(run.describe()).isFalse();
    return json.path("result").asText();
  }

  /**
   * Keeps a request body Claude Code really sent under the test resources' {@code fixtures/claude-code}
   * when {@code SPILLWAY_KEEP_FIXTURES} is set (how the kept ones were made).
   */
  private static void keepFixture(String name, String body) throws IOException {
    if (System.getenv("SPILLWAY_KEEP_FIXTURES") == null) {
      return;
    }
    Path dir = RepositoryFiles.root().resolve("gateway-app/src/test/resources/fixtures/claude-code");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve(name), body);
  }

  private static String routeState(GatewayHarness h) {
    JsonNode status = parse(h.get("/admin/status", GatewayHarness.ADMIN_TOKEN).body());
    return status.path("routes").get(0).path("breaker").path("state").asText();
  }

  private static List<JsonNode> awaitMessagesLines(LogCapture logs, int count) {
    await("access log lines for /v1/messages").atMost(Duration.ofSeconds(10))
        .until(() -> messagesLines(logs).size() >= count);
    return messagesLines(logs);
  }

  private static List<JsonNode> messagesLines(LogCapture logs) {
    return logs.accessLines().stream().map(AnthropicStubs::parse)
        .filter(line -> "messages".equals(line.path("route").asText())).toList();
  }
}
