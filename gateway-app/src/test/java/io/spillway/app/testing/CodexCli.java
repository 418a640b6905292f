package io.spillway.app.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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
    Path binary = CliProcess.locate("SPILLWAY_CODEX_BIN", "codex", "the Codex CLI is not installed"
        + " (npm install -g @openai/codex@" + PINNED_VERSION + ", or set SPILLWAY_CODEX_BIN=/path/to/codex)");
    try {
      // Under the build directory when there is one: Codex will not put its helpers under /tmp.
      Path target = Path.of("target");
      Path root = Files.isDirectory(target)
          ? Files.createTempDirectory(target.toAbsolutePath(), "codex-")
          : Files.createTempDirectory("spillway-codex-");
      Files.createDirectories(root.resolve("codex-home"));
      Files.createDirectories(root.resolve("home"));
      return new CodexCli(binary, CliProcess.version(binary, root, Map.of()), root);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
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
    return CliProcess.newWorkdir(root, name);
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
    CliProcess.Ended ended = CliProcess.run(builder, timeout);
    return new Run(command, version, ended.exitCode(), ended.timedOut(), ended.took(),
        CliProcess.read(stdout), CliProcess.read(stderr), CliProcess.read(lastMessage));
  }

  /** Deletes the throwaway homes and working directories. */
  @Override
  public void close() {
    CliProcess.delete(root);
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
