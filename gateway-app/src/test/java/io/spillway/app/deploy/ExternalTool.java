package io.spillway.app.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A program of this machine that a deployment test runs (promtool, prometheus, nginx, buildah...).
 * Without it the test is skipped with the package to install, except on CI ({@code CI=true}), where
 * that is a failure: {@code .ci/run} installs every one of them.
 */
public final class ExternalTool {
  private static final List<String> PATH = List.of("/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/bin", "/sbin");

  private ExternalTool() {}

  /** The program's path; skips the test (fails it on CI) when it is not installed. */
  public static Path require(String program, String debianPackage) {
    for (String dir : PATH) {
      Path candidate = Path.of(dir, program);
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    String reason = program + " is not installed (apt-get install -y " + debianPackage + ")";
    if ("true".equals(System.getenv("CI"))) {
      Assertions.fail(reason + "; CI must run this test");
    }
    Assumptions.abort(reason + "; skipping");
    throw new AssertionError("unreachable");
  }

  /** What a finished program printed, stdout and stderr together, and its exit code. */
  public record Result(int exitCode, String output) {}

  /** Runs a command to its end in {@code dir} and returns its exit code and output. */
  public static Result run(Path dir, Duration limit, String... command) {
    try {
      Path log = Files.createTempFile("spillway-tool", ".log");
      try {
        Process process = new ProcessBuilder(command).directory(dir.toFile())
            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
          process.descendants().forEach(ProcessHandle::destroyForcibly);
          process.destroyForcibly();
          Assertions.fail(String.join(" ", command) + " did not finish within " + limit + ":\n" + Files.readString(log));
        }
        return new Result(process.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
      } finally {
        Files.deleteIfExists(log);
      }
    } catch (IOException e) {
      throw new IllegalStateException("could not run " + String.join(" ", command), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
