package io.spillway.app.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.CodexCli;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The real Codex CLI ({@code codex exec}) against the demo's own servers (the simulated cloud, the
 * simulated Ollama and the gateway, on free ports, on a fake clock), configured with nothing but the
 * provider block the demo's banner prints: in both phases of the demo, Codex's shell runs the
 * command the simulated model asks for and the model's answer quotes its output. Codex's own retries
 * are off, so its exit status 0 means no call failed; the access log says the same call by call.
 *
 * <p>Needs Codex installed (see {@link CodexCli}); skipped with the reason otherwise, except in CI.
 */
class DemoCodexTest {
  static final String MODEL = "gpt-5.5";
  /** A file only Codex's {@code ls} can have seen. */
  static final String MARKER = "spillway-demo-marker.txt";
  static final String TASK = "List the files in this folder with a shell command, then tell me what you saw.";
  static final Duration RUN_TIMEOUT = Duration.ofSeconds(90);
  static final String[] NO_RETRIES = {
      "model_providers.spillway.request_max_retries=0", "model_providers.spillway.stream_max_retries=0"};

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");

  @Test
  @Timeout(300)
  void codexRunsItsShellOnTheHealthyCloudAndDuringTheCapacityStormWithoutAFailedCall() {
    try (LogCapture logs = new LogCapture();
        CodexCli codex = CodexCli.locate();
        Demo demo = Demo.start(new Demo.Options(0, Duration.ofSeconds(20), Duration.ofSeconds(25),
            Duration.ofSeconds(30), Duration.ZERO), clock)) {
      codex.configure(bannerConfigToml(demo.instructions()));
      Map<String, String> env = Map.of("SPILLWAY_KEY", Demo.GOLD_KEY);

      CodexCli.Run healthy = codex.exec(workdirWithMarker(codex, "healthy"), env, RUN_TIMEOUT, MODEL, TASK, NO_RETRIES);

      assertThat(healthy.exitCode()).as(healthy.describe()).isZero();
      assertThat(healthy.lastMessage()).as(healthy.describe())
          .contains("the simulated cloud").contains("The tool printed").contains(MARKER);
      List<JsonNode> cloudTurns = awaitResponsesLines(logs, 2);
      assertThat(cloudTurns).as("Codex's turns on the healthy cloud: the call, then the answer").hasSize(2)
          .allSatisfy(line -> assertServed(line, "cloud"));

      await().atMost(Duration.ofSeconds(20)).until(() -> demo.gateway().local().readiness().checked());
      clock.advance(Duration.ofSeconds(20));
      assertThat(demo.cloud().atCapacity()).isTrue();

      CodexCli.Run storm = codex.exec(workdirWithMarker(codex, "storm"), env, RUN_TIMEOUT, MODEL, TASK, NO_RETRIES);

      assertThat(storm.exitCode()).as(storm.describe()).isZero();
      assertThat(storm.lastMessage()).as(storm.describe())
          .contains("simulated Ollama").contains("The tool printed").contains(MARKER);
      List<JsonNode> stormTurns = awaitResponsesLines(logs, 4).subList(2, 4);
      assertThat(stormTurns).as("Codex's turns while the cloud is at capacity").allSatisfy(line -> assertServed(line, "local"));
    }
  }

  /** The TOML lines of the demo's banner, from {@code model =} to {@code wire_api =}, as a user pastes them. */
  static String bannerConfigToml(String banner) {
    List<String> lines = banner.lines().toList();
    int from = lines.indexOf(lines.stream().filter(l -> l.strip().startsWith("model = ")).findFirst().orElseThrow());
    int to = lines.indexOf(lines.stream().filter(l -> l.strip().startsWith("wire_api = ")).findFirst().orElseThrow());
    String toml = lines.subList(from, to + 1).stream().map(String::strip).collect(Collectors.joining("\n", "", "\n"));
    assertThat(toml).contains("model_provider = \"spillway\"", "[model_providers.spillway]", "env_key = \"SPILLWAY_KEY\"");
    return toml;
  }

  private static Path workdirWithMarker(CodexCli codex, String name) {
    Path workdir = codex.newWorkdir(name);
    try {
      Files.writeString(workdir.resolve(MARKER), "the demo's Codex test\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return workdir;
  }

  private static void assertServed(JsonNode line, String backend) {
    assertThat(line.path("backend").asText()).as(line.toString()).isEqualTo(backend);
    assertThat(line.path("status").asInt()).as(line.toString()).isEqualTo(200);
    assertThat(line.path("outcome").asText()).as(line.toString()).isEqualTo("success");
    assertThat(line.path("tier").asText()).isEqualTo("gold");
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
    return logs.accessLines().stream().map(line -> {
      try {
        return Json.parse(line);
      } catch (IOException e) {
        throw new UncheckedIOException("access log line is not JSON: " + line, e);
      }
    }).filter(line -> "responses".equals(line.path("route").asText())).toList();
  }
}
