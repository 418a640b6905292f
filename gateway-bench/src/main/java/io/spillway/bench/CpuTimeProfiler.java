package io.spillway.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * Reports {@code cpu.time.norm}: CPU time of the benchmark's worker threads per operation.
 *
 * <p>JMH's scores are wall-clock time, which on a shared machine measures the machine's load as
 * much as the code. A thread's CPU time does not grow while it waits for a core, so this secondary
 * result stays comparable between runs on a busy machine (caches and frequency still vary).
 *
 * <pre>java -jar spillway-bench.jar RequestPathBenchmark -prof io.spillway.bench.CpuTimeProfiler -prof gc</pre>
 */
public final class CpuTimeProfiler implements InternalProfiler {
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private long before;

  @Override
  public String getDescription() {
    return "CPU time of the JMH worker threads per operation";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmark, IterationParams iteration) {
    before = workerCpuNanos();
  }

  @Override
  public Collection<? extends Result> afterIteration(
      BenchmarkParams benchmark, IterationParams iteration, IterationResult result) {
    long cpu = workerCpuNanos() - before;
    long ops = result.getMetadata().getAllOps();
    return List.of(new ScalarResult("cpu.time.norm", ops == 0 ? Double.NaN : (double) cpu / ops, "ns/op",
        AggregationPolicy.AVG));
  }

  private long workerCpuNanos() {
    long total = 0;
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && info.getThreadName().contains("jmh-worker")) {
        long cpu = threads.getThreadCpuTime(info.getThreadId());
        if (cpu > 0) {
          total += cpu;
        }
      }
    }
    return total;
  }
}
