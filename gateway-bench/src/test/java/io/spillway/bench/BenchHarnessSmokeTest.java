package io.spillway.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
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

  @Test
  void streamScaleRunCompletesEveryStreamAndReportsHeapAndTimeToFirstByte(@TempDir Path work) throws Exception {
    BenchScript.Run run = BenchScript.smoke("stream-scale.sh", work, "curl", "ss");

    assertThat(run.exitCode()).as(run.output()).isZero();
    assertThat(run.output()).as(run.output())
        .contains("streams: 200 requested, 200 completed, 0 errors")
        .containsPattern("ttfb p50/p99: direct \\S+ ms, through Spillway \\S+ ms")
        .containsPattern("Spillway heap: peak used \\d+ MiB, live after GC at plateau \\d+ MiB");
    assertThat(BenchScript.resultFiles(work)).as("results file kept").isEqualTo(1);
  }
}
