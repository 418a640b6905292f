package io.spillway.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.ConfigException;
import io.spillway.config.ConfigLoader;
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
  @Test
  void sideBySideRunReportsDirectNginxAndSpillwayAtBothConcurrencies(@TempDir Path work) throws Exception {
    BenchScript.Run run = BenchScript.smoke("run.sh", work, "nginx", "wrk", "curl");

    assertThat(run.exitCode()).as(run.output()).isZero();
    for (String conns : new String[] {"64", "1"}) {
      for (String target : new String[] {"direct", "nginx", "spillway"}) {
        assertThat(run.output()).as(run.output())
            .containsPattern("(?m)^" + conns + "\\s+" + target + "\\s+\\d+\\s+\\d+\\s+\\d+\\s+0$");
      }
    }
    assertThat(run.output()).as(run.output())
        .containsPattern("throughput at 64 connections: spillway/nginx = \\d+\\.\\d+")
        .containsPattern("added latency at 1 connection over direct: p50 [+-]\\d+ µs")
        .containsPattern("start to ready: \\d+ ms")
        .containsPattern("Spillway RSS: idle \\d+ MiB");
    assertThat(BenchScript.resultFiles(work)).as("results file kept").isEqualTo(1);
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
