package io.spillway.app.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * What the real command-line clients the tests drive ({@link CodexCli}, {@link ClaudeCodeCli}) share:
 * finding the binary (an environment variable naming it, else the {@code PATH}), skipping the test
 * without it (failing it with {@code CI=true}), asking its version, running it bounded by a timeout
 * after which it and everything it started are killed, and the throwaway directory each instance
 * works under.
 */
final class CliProcess {
  private CliProcess() {}

  /** How one run ended: its exit code (-1 when killed), whether the timeout killed it, how long it took. */
  record Ended(int exitCode, boolean timedOut, Duration took) {}

  /**
   * The binary {@code binEnv} names, else {@code name} on the {@code PATH}; without either the test
   * is skipped (failed with {@code CI=true}) saying {@code notInstalled}.
   */
  static Path locate(String binEnv, String name, String notInstalled) {
    Path binary = find(binEnv, name);
    if (binary == null) {
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(notInstalled);
      }
      Assumptions.abort(notInstalled);
    }
    return binary;
  }

  private static Path find(String binEnv, String name) {
    String configured = System.getenv(binEnv);
    if (configured != null && !configured.isBlank()) {
      Path path = Path.of(configured);
      return Files.isExecutable(path) ? path : null;
    }
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir, name);
      if (!dir.isEmpty() && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  /** What {@code binary --version} prints (written to {@code root}), run with {@code env} added to this environment. */
  static String version(Path binary, Path root, Map<String, String> env) {
    Path out = root.resolve("version.txt");
    ProcessBuilder builder = new ProcessBuilder(binary.toString(), "--version")
        .redirectErrorStream(true).redirectOutput(out.toFile());
    builder.environment().putAll(env);
    Ended ended;
    try {
      ended = run(builder, Duration.ofSeconds(30));
    } catch (UncheckedIOException e) {
      return "unknown (" + e.getCause() + ")";
    }
    if (ended.timedOut()) {
      return "unknown (" + binary.getFileName() + " --version did not answer in 30s)";
    }
    return read(out).strip();
  }

  /** Starts {@code builder} with its input closed and waits for it, at most {@code timeout}. */
  static Ended run(ProcessBuilder builder, Duration timeout) {
    long started = System.nanoTime();
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start " + builder.command(), e);
    }
    boolean finished = false;
    try {
      process.getOutputStream().close();
      finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while " + builder.command() + " ran", e);
    } finally {
      if (!finished) {
        killTree(process);
      }
    }
    return new Ended(finished ? process.exitValue() : -1, !finished, Duration.ofNanos(System.nanoTime() - started));
  }

  /** Kills the process and whatever it started (a native binary under a launcher, a sandboxed command). */
  private static void killTree(Process process) {
    List<ProcessHandle> descendants = process.descendants().toList();
    process.destroyForcibly();
    descendants.forEach(ProcessHandle::destroyForcibly);
    try {
      process.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A file the run wrote, or an empty string when it wrote none. */
  static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "<unreadable: " + e + ">";
    }
  }

  /** A fresh, empty working directory {@code work-<name>} under {@code root}. */
  static Path newWorkdir(Path root, String name) {
    try {
      return Files.createDirectories(root.resolve("work-" + name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Deletes {@code root} and everything under it. */
  static void delete(Path root) {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
