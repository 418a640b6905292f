package io.spillway.bench;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ConfigException;
import io.spillway.config.ConfigLoader;
import io.spillway.core.json.Json;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the benchmark harnesses from rotting: each runs in its smoke mode (seconds, not minutes)
 * against this build and must report every number it promises. No number is judged here: CI
 * measures no time.
 */
class BenchHarnessSmokeTest {
  private static final String[] BODIES = {"chat-1k", "codex-chat", "codex-turns", "codex-stream"};
  private static final String FIXTURES = "gateway-local-backend/src/test/resources/fixtures/codex";

  @Test
  void sideBySideRunReportsEveryBodyTargetAndConcurrencyWithCpuPerRequest(@TempDir Path work) throws Exception {
    BenchScript.Run run = BenchScript.smoke("run.sh", work, "nginx", "wrk", "curl");

    assertThat(run.exitCode()).as(run.output()).isZero();
    for (String body : BODIES) {
      for (String conns : new String[] {"64", "1"}) {
        for (String target : new String[] {"direct", "nginx", "spillway"}) {
          assertThat(run.output()).as(run.output()).containsPattern(
              "(?m)^" + body + "\\s+" + conns + "\\s+" + target + "\\s+\\d+\\s+\\d+\\s+\\d+\\s+\\d+\\.\\d\\s+0$");
        }
      }
      assertThat(run.output()).as(run.output()).containsPattern(body
          + ", spillway/nginx at 64 connections: throughput \\d+\\.\\d+ x.*, CPU per request \\d+\\.\\d x.*;"
          + " added latency at 1 connection over direct: p50 [+-]\\d+ µs");
    }
    assertThat(run.output()).as(run.output())
        .containsPattern("load average \\(1/5/15 min\\) [\\d.]+ [\\d.]+ [\\d.]+ at the start")
        .containsPattern("start to ready: \\d+ ms")
        .containsPattern("Spillway RSS: idle \\d+ MiB");
    assertThat(BenchScript.resultFiles(work)).as("results file kept").isEqualTo(1);
  }

  /**
   * The Codex body sent as chat is the captured turn exactly as Spillway sends it to an OpenAI-kind
   * server, with only the model and the stream flag changed (so a change in the fixture shows here).
   */
  @Test
  void codexChatBodyIsTheCapturedTurnWithACloudModelAndNoStream() throws Exception {
    JsonNode fixture = Json.MAPPER.readTree(
        BenchScript.ROOT.resolve(FIXTURES).resolve("first-turn-gpt-4o-mini.chat.json").toFile());
    JsonNode body = Json.MAPPER.readTree(BenchScript.ROOT.resolve("bench/codex-chat-request.json").toFile());

    ObjectNode expected = ((ObjectNode) fixture).deepCopy().put("model", "gpt-4o-mini").put("stream", false);
    assertThat(body).isEqualTo(expected);
    assertThat(body.get("tools")).hasSize(12);
  }

  /**
   * The fake upstream's Responses stream is served by nginx {@code return 200 '…'}: under nginx's
   * 4 KB token limit, no quote or variable nginx would read, every event's data is the JSON of its
   * type, and it ends with {@code response.completed} carrying usage (which quota settles from).
   */
  @Test
  void fakeUpstreamResponsesStreamIsOneNginxTokenOfTypedEventsEndingInUsage() throws Exception {
    String sse = Files.readString(BenchScript.ROOT.resolve("bench/responses-stream.sse"));

    assertThat(sse.getBytes(StandardCharsets.UTF_8).length).isLessThan(4000);
    assertThat(sse).doesNotContain("'", "$", "\\").endsWith("\n\n");
    String[] events = sse.strip().split("\n\n");
    for (String event : events) {
      String[] lines = event.split("\n");
      assertThat(lines).hasSize(2);
      String type = lines[0].substring("event: ".length());
      assertThat(Json.MAPPER.readTree(lines[1].substring("data: ".length())).get("type").asText()).isEqualTo(type);
    }
    String last = events[events.length - 1];
    assertThat(last).startsWith("event: response.completed");
    assertThat(Json.MAPPER.readTree(last.substring(last.indexOf("data: ") + 6)).at("/response/usage/input_tokens").asInt())
        .isPositive();
  }

  /**
   * With the upstream over h2c when this build's config knows {@code cloud.h2c}, over HTTP/1.1
   * otherwise (the script's {@code BENCH_UPSTREAM_H2C}); the fake upstream speaks both.
   */
  @Test
  void streamScaleRunCompletesEveryStreamAndReportsHeapDescriptorsConnectionsAndTimeToFirstByte(@TempDir Path work)
      throws Exception {
    boolean h2c = configTakesCloudH2c();
    BenchScript.Run run = BenchScript.smoke(
        "stream-scale.sh", work, Map.of("BENCH_UPSTREAM_H2C", h2c ? "1" : "0"), "curl", "ss");

    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output()).as(run.output())
        .contains("upstream over " + (h2c ? "h2c" : "HTTP/1.1"))
        .contains("streams: 200 requested, 200 completed, 0 errors")
        .containsPattern("ttfb p50/p99: direct \\d+\\.\\d+/\\d+\\.\\d+ ms, through Spillway \\d+\\.\\d+/\\d+\\.\\d+ ms")
        .containsPattern("at plateau: Spillway open fds \\d+, upstream connections \\d+, client connections \\d+;"
            + " StreamClients open fds \\d+")
        .containsPattern("Spillway heap: peak used \\d+ MiB, live after GC at plateau \\d+ MiB \\(target <= 256\\);"
            + " RSS at plateau \\d+ MiB, peak \\d+ MiB");
    assertThat(BenchScript.resultFiles(work)).as("results file kept").isEqualTo(1);
  }

  /** Whether this build's config takes {@code cloud.h2c: true}, as stream-scale.sh writes it by default. */
  private static boolean configTakesCloudH2c() {
    ConfigLoader loader = new ConfigLoader(name -> null);
    String cloud = "cloud: { baseUrl: \"http://127.0.0.1:9/v1\", apiKey: sk-probe%s }\n";
    loader.parse("probe", cloud.formatted(""));
    try {
      loader.parse("probe", cloud.formatted(", h2c: true"));
      return true;
    } catch (ConfigException e) {
      return false;
    }
  }
}
