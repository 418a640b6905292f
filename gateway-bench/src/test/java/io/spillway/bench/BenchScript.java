package io.spillway.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Runs one of the {@code bench/} scripts in its smoke mode the way a user would, but with Spillway
 * and the load tools taken from this test run's classpath (this module has gateway-app as a test
 * dependency), so no packaged jar is needed. Tools the script needs are checked first: missing ones
 * skip the test with the reason, except when {@code CI=true}, where they fail it. Nothing is timed.
 */
final class BenchScript {
  static final Path ROOT = Path.of("").toAbsolutePath().getParent();

  private BenchScript() {}

  /** The finished run: its exit code and everything it printed. */
  record Run(int exitCode, String output) {}

  /**
   * Runs {@code bench/<script> --smoke} on free loopback ports from {@code portBase}, with results
   * kept under {@code work}; fails if it takes longer than five minutes.
   */
  static Run smoke(String script, Path work, String... tools) throws IOException, InterruptedException {
    return smoke(script, work, Map.of(), tools);
  }

  /** As {@link #smoke(String, Path, String...)}, with {@code extraEnv} set for the script too. */
  static Run smoke(String script, Path work, Map<String, String> extraEnv, String... tools)
      throws IOException, InterruptedException {
    requireTools(script, tools);
    Path file = ROOT.resolve("bench").resolve(script);
    assertThat(file).exists();
    Path log = work.resolve(script + ".log");
    ProcessBuilder builder = new ProcessBuilder("bash", file.toString(), "--smoke")
        .directory(ROOT.toFile())
        .redirectErrorStream(true)
        .redirectOutput(log.toFile());
    Map<String, String> env = builder.environment();
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("SPILLWAY_CMD", javaCommand() + " io.spillway.app.Main");
    env.put("BENCH_CP", classpath());
    env.put("BENCH_PORT_BASE", Integer.toString(freePortRange(6)));
    env.put("BENCH_RESULTS_DIR", Files.createDirectories(work.resolve("results")).toString());
    env.putAll(extraEnv);
    Process process = builder.start();
    boolean finished = process.waitFor(5, TimeUnit.MINUTES);
    String output = Files.readString(log, StandardCharsets.UTF_8);
    if (!finished) {
      process.descendants().forEach(ProcessHandle::destroy);
      process.destroy();
      fail("bench/" + script + " --smoke did not finish in 5 minutes:\n" + output);
    }
    return new Run(process.exitValue(), output);
  }

  /** How many result files the run kept. */
  static long resultFiles(Path work) throws IOException {
    try (var files = Files.list(work.resolve("results"))) {
      return files.count();
    }
  }

  private static void requireTools(String script, String... tools) {
    for (String tool : tools) {
      if (!onPath(tool)) {
        String reason = "bench/" + script + " needs " + tool + " (apt-get install -y " + tool + ")";
        if ("true".equals(System.getenv("CI"))) {
          fail(reason + "; CI=true, so a missing tool fails the run");
        }
        Assumptions.abort(reason + "; skipping its smoke run");
      }
    }
  }

  private static boolean onPath(String tool) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, tool))) {
        return true;
      }
    }
    return false;
  }

  /** This JVM with this run's classpath: Spillway exactly as built. */
  private static String javaCommand() {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return java + " --enable-native-access=ALL-UNNAMED -Xmx512m -cp " + classpath();
  }

  /** The scripts split commands on spaces, so the classpath must hold none. */
  private static String classpath() {
    String classpath = System.getProperty("java.class.path");
    assertThat(classpath).as("test classpath (the bench scripts split words)").doesNotContain(" ");
    return classpath;
  }

  /**
   * The first of {@code count} consecutive loopback ports that are free now, all below the kernel's
   * ephemeral range: the script starts and stops servers on them while wrk, nginx and Spillway hold
   * hundreds of outgoing connections, and any of those may take a port in that range as its own
   * local port, so a port free at the start could be taken by the time a server binds it.
   */
  private static int freePortRange(int count) throws IOException {
    int below = Math.clamp(ephemeralLow(), 10_000, 32_768) - count;
    for (int attempt = 0; attempt < 50; attempt++) {
      int base = ThreadLocalRandom.current().nextInt(Math.min(20_000, below - 1), below);
      if (allFree(base, count)) {
        return base;
      }
    }
    throw new IOException("no " + count + " consecutive free loopback ports found");
  }

  /** The lowest port the kernel hands out for outgoing connections (Linux; 32768 where unknown). */
  private static int ephemeralLow() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).trim();
      return Integer.parseInt(range.split("\\s+")[0]);
    } catch (IOException | RuntimeException e) {
      return 32_768;
    }
  }

  private static boolean allFree(int base, int count) {
    for (int port = base; port < base + count; port++) {
      try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
        socket.setReuseAddress(true);
      } catch (IOException e) {
        return false;
      }
    }
    return true;
  }
}
