package io.spillway.app.testing;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The real OpenAI Codex CLI, run as {@code codex exec} in a child process, the way a developer or a
 * CI job runs it. Each instance has its own throwaway {@code CODEX_HOME} and {@code HOME} (so the
 * user's own {@code ~/.codex} is never read or written) under a temporary directory.
 *
 * <p>The binary is {@code SPILLWAY_CODEX_BIN} if set, otherwise {@code codex} on the {@code PATH}.
 * When neither exists the calling test is skipped with the reason, or fails when {@code CI=true}:
 * {@code .ci/run} installs {@value #PINNED_VERSION}. Every run is bounded by a timeout, after which
 * Codex and everything it started are killed; a {@link Run} keeps Codex's stdout and stderr for
 * assertion messages.
 */
public final class CodexCli implements AutoCloseable {
  /** The version {@code .ci/run} installs and docs/clients.md was checked against. */
  public static final String PINNED_VERSION = "0.171.0";

  private final Path binary;
  private final String version;
  private final Path root;
  private final Path codexHome;

  private CodexCli(Path binary, String version, Path root) {
    this.binary = binary;
    this.version = version;
    this.root = root;
    this.codexHome = root.resolve("codex-home");
  }

  /** Finds Codex, or skips the test (fails it with {@code CI=true}) with what to install. */
  public static CodexCli locate() {
    Path binary = find();
    if (binary == null) {
      String reason = "the Codex CLI is not installed (npm install -g @openai/codex@" + PINNED_VERSION
          + ", or set SPILLWAY_CODEX_BIN=/path/to/codex)";
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(reason);
      }
      Assumptions.abort(reason);
    }
    try {
      // Under the build directory when there is one: Codex will not put its helpers under /tmp.
      Path target = Path.of("target");
      Path root = Files.isDirectory(target)
          ? Files.createTempDirectory(target.toAbsolutePath(), "codex-")
          : Files.createTempDirectory("spillway-codex-");
      Files.createDirectories(root.resolve("codex-home"));
      Files.createDirectories(root.resolve("home"));
      return new CodexCli(binary, versionOf(binary, root), root);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Path find() {
    String configured = System.getenv("SPILLWAY_CODEX_BIN");
    if (configured != null && !configured.isBlank()) {
      Path path = Path.of(configured);
      return Files.isExecutable(path) ? path : null;
    }
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir, "codex");
      if (!dir.isEmpty() && Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  /** {@code codex --version}, e.g. {@code codex-cli 0.171.0}. */
  private static String versionOf(Path binary, Path root) {
    try {
      Path out = root.resolve("version.txt");
      Process process = new ProcessBuilder(binary.toString(), "--version")
          .redirectErrorStream(true).redirectOutput(out.toFile()).start();
      process.getOutputStream().close();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        killTree(process);
        return "unknown (codex --version did not answer in 30s)";
      }
      return Files.readString(out, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      return "unknown (" + e + ")";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public String version() {
    return version;
  }

  /** Writes {@code $CODEX_HOME/config.toml}, the file a user keeps at {@code ~/.codex/config.toml}. */
  public CodexCli configure(String configToml) {
    try {
      Files.writeString(codexHome.resolve("config.toml"), configToml, StandardCharsets.UTF_8);
      return this;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A fresh, empty working directory for one run. */
  public Path newWorkdir(String name) {
    try {
      return Files.createDirectories(root.resolve("work-" + name));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Runs {@code codex exec} non-interactively in {@code workdir}: no git repository needed, the
   * {@code workspace-write} sandbox, {@code --strict-config} (so a key Codex does not know fails the
   * run), Codex's analytics and update check off, and the last agent message written to a file. The
   * child's environment is this process's without any {@code OPENAI_*} variable, plus {@code env}.
   * {@code overrides} are more {@code -c key=value} config overrides.
   */
  public Run exec(Path workdir, Map<String, String> env, Duration timeout, String model, String prompt,
      String... overrides) {
    Path stdout = workdir.resolveSibling(workdir.getFileName() + ".stdout");
    Path stderr = workdir.resolveSibling(workdir.getFileName() + ".stderr");
    Path lastMessage = workdir.resolveSibling(workdir.getFileName() + ".last-message");
    List<String> command = new ArrayList<>(List.of(binary.toString(), "exec", "--skip-git-repo-check",
        "--strict-config", "--ephemeral", "--color", "never", "-s", "workspace-write",
        "-m", model, "-o", lastMessage.toString(),
        // A test run reports nothing to OpenAI and looks for no update.
        "-c", "analytics.enabled=false", "-c", "check_for_update_on_startup=false"));
    for (String override : overrides) {
      command.add("-c");
      command.add(override);
    }
    command.add(prompt);
    ProcessBuilder builder = new ProcessBuilder(command).directory(workdir.toFile())
        .redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
    builder.environment().keySet().removeIf(name -> name.startsWith("OPENAI_"));
    builder.environment().put("CODEX_HOME", codexHome.toString());
    builder.environment().put("HOME", root.resolve("home").toString());
    builder.environment().putAll(env);
    long started = System.nanoTime();
    Process process;
    try {
      process = builder.start();
    } catch (IOException e) {
      throw new UncheckedIOException("could not start " + command, e);
    }
    boolean finished = false;
    try {
      process.getOutputStream().close();
      finished = process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while " + command + " ran", e);
    } finally {
      if (!finished) {
        killTree(process);
      }
    }
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    return new Run(command, version, finished ? process.exitValue() : -1, !finished, took,
        read(stdout), read(stderr), read(lastMessage));
  }

  /** Kills Codex and whatever it started (its native binary, a sandboxed command). */
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

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "<unreadable: " + e + ">";
    }
  }

  /** Deletes the throwaway homes and working directories. */
  @Override
  public void close() {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One finished (or killed) {@code codex exec}: what it printed and how it ended. */
  public record Run(List<String> command, String version, int exitCode, boolean timedOut, Duration took,
      String stdout, String stderr, String lastMessage) {

    /** Everything a failed assertion needs to explain itself. */
    public String describe() {
      return "codex exec (" + version + ") " + (timedOut ? "was killed after its timeout" : "exited " + exitCode)
          + " after " + took.toMillis() + " ms\ncommand: " + command
          + "\n--- stdout ---\n" + stdout + "\n--- stderr ---\n" + stderr
          + "\n--- last message ---\n" + lastMessage + "\n---";
    }
  }
}
