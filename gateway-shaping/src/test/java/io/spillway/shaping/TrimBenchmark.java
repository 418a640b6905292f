package io.spillway.shaping;

import io.spillway.core.tokens.TokenCounter;
import io.spillway.config.ShapingConfig;
import io.spillway.shaping.signal.SignalScorer;
import io.spillway.trim.ContextTrimmer;
import io.spillway.trim.TrimSettings;
import io.spillway.core.testing.SampleSources;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Trimming a 128K-token prompt (a Python module with a traceback at its end), as the shaping stage
 * does on the request path. See docs/shaping.md for how to run it; {@link #main} runs every
 * benchmark here.
 *
 * <ul>
 *   <li>{@code trim}: the trimmer alone (the line scan, definitions, trace, output);
 *   <li>{@code trimWithTokenGuard}: what the request path does: trim, count the result exactly, and
 *       check the original is longer by tokenizing only as much of it as the result has;
 *   <li>{@code scoreSignal}: the low-signal scan of the same prompt;
 *   <li>{@code countAllTokens}: for comparison, an exact count of the whole prompt (what the
 *       tokens-saved metric does off the request path).
 * </ul>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class TrimBenchmark {
  /** The prompt size the benchmark is about. */
  static final int TARGET_TOKENS = 128_000;

  private String prompt;
  private ContextTrimmer trimmer;
  private TokenCounter counter;
  private SignalScorer scorer;

  @Setup
  public void setUp() {
    counter = TokenCounter.forModel("gpt-4o");
    int sample = 2000;
    double tokensPerLine = (double) counter.count(SampleSources.pythonModuleWithTraceback(sample)) / sample;
    int lines = (int) (TARGET_TOKENS / tokensPerLine);
    prompt = SampleSources.pythonModuleWithTraceback(lines);
    while (counter.count(prompt) < TARGET_TOKENS) {
      lines += lines / 50;
      prompt = SampleSources.pythonModuleWithTraceback(lines);
    }
    System.out.printf("%nprompt: %d lines, %d characters, %d tokens%n", lines, prompt.length(), counter.count(prompt));
    trimmer = new ContextTrimmer(TrimSettings.DEFAULTS);
    scorer = new SignalScorer(ShapingConfig.SignalConfig.DEFAULTS);
    String trimmed = trimmer.trimCode(prompt, null);
    if (trimmed == prompt) {
      throw new IllegalStateException("the benchmark prompt was not trimmed");
    }
  }

  @Benchmark
  public String trim() {
    return trimmer.trimCode(prompt, null);
  }

  @Benchmark
  public String trimWithTokenGuard() {
    return TokenGuard.fewerTokens(prompt, trimmer.trimCode(prompt, null), counter.tally(Long.MAX_VALUE), (original, after) -> {});
  }

  @Benchmark
  public Object scoreSignal() {
    return scorer.score(List.of(prompt), null, 0);
  }

  @Benchmark
  public int countAllTokens() {
    return counter.count(prompt);
  }

  /**
   * Runs the JMH benchmarks (optionally only those matching {@code args[0]}), or with {@code --cpu}
   * measures each operation's CPU time on this thread instead: on a shared machine, wall-clock time
   * mostly measures the neighbours.
   */
  public static void main(String[] args) throws RunnerException {
    if (args.length > 0 && args[0].equals("--cpu")) {
      cpuTimes();
      return;
    }
    String include = args.length > 0 ? args[0] : TrimBenchmark.class.getSimpleName();
    new Runner(new OptionsBuilder().include(include).build()).run();
  }

  private static void cpuTimes() {
    TrimBenchmark b = new TrimBenchmark();
    b.setUp();
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    java.util.Map<String, Runnable> operations = new java.util.LinkedHashMap<>();
    operations.put("trim", b::trim);
    operations.put("trimWithTokenGuard", b::trimWithTokenGuard);
    operations.put("scoreSignal", b::scoreSignal);
    operations.put("countAllTokens", b::countAllTokens);
    for (int warmUp = 0; warmUp < 100; warmUp++) {
      operations.forEach((name, op) -> {
        if (!name.equals("countAllTokens")) {
          op.run();
        }
      });
    }
    for (java.util.Map.Entry<String, Runnable> op : operations.entrySet()) {
      int runs = op.getKey().equals("countAllTokens") ? 20 : 200;
      long[] cpu = new long[runs];
      for (int i = 0; i < runs; i++) {
        long start = mx.getCurrentThreadCpuTime();
        op.getValue().run();
        cpu[i] = mx.getCurrentThreadCpuTime() - start;
      }
      java.util.Arrays.sort(cpu);
      System.out.printf("%-20s CPU ms/op: median %.2f, best %.2f%n", op.getKey(), cpu[runs / 2] / 1e6, cpu[0] / 1e6);
    }
  }
}
