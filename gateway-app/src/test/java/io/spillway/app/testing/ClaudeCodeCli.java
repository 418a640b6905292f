package io.spillway.app.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The real Claude Code CLI ({@code @anthropic-ai/claude-code}, a native binary inside the npm
 * package), run as {@code claude -p} in a child process the way a developer or a CI job runs it,
 * pointed at the gateway with the environment docs/clients.md gives: {@code ANTHROPIC_BASE_URL},
 * {@code ANTHROPIC_API_KEY} (the gateway key) and {@code CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1}
 * (no telemetry, error reports or update checks). Each instance has its own throwaway
 * {@code HOME} (so a user's {@code ~/.claude} is never read or written) under a temporary directory.
 *
 * <p>The binary is {@code SPILLWAY_CLAUDE_BIN} if set, otherwise {@code claude} on the
 * {@code PATH}. When neither exists the calling test is skipped with the reason, or fails when
 * {@code CI=true}: {@code .ci/run} installs {@value #PINNED_VERSION}. Every run is bounded by a
 * timeout, after which Claude Code and everything it started are killed.
 */
public final class ClaudeCodeCli implements AutoCloseable {
  /** The version {@code .ci/run} installs and docs/clients.md was checked against. */
  public static final String PINNED_VERSION = "2.1.328";

  private final Path binary;
  private final String version;
  private final Path root;

  private ClaudeCodeCli(Path binary, String version, Path root) {
    this.binary = binary;
    this.version = version;
    this.root = root;
  }

  /** Finds Claude Code, or skips the test (fails it with {@code CI=true}) with what to install. */
  public static ClaudeCodeCli locate() {
    Path binary = CliProcess.locate("SPILLWAY_CLAUDE_BIN", "claude", "the Claude Code CLI is not installed (npm install"
        + " -g @anthropic-ai/claude-code@" + PINNED_VERSION + ", or set SPILLWAY_CLAUDE_BIN=/path/to/claude)");
    try {
      // Outside the repository, so the git status Claude Code attaches to each turn is not this one's.
      Path root = Files.createTempDirectory("spillway-claude-");
      Files.createDirectories(root.resolve("home"));
      Map<String, String> quiet = Map.of("HOME", root.resolve("home").toString(),
          "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
      return new ClaudeCodeCli(binary, CliProcess.version(binary, root, quiet), root);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public String version() {
    return version;
  }

  /** A fresh, empty working directory for one run. */
  public Path newWorkdir(String name) {
    return CliProcess.newWorkdir(root, name);
  }

  /**
   * Runs {@code claude -p prompt} in {@code workdir} with its Bash tool allowed
   * ({@code --allowedTools Bash}) and its answer as JSON ({@code --output-format json}). The child's
   * environment is this process's without any {@code ANTHROPIC_*} or {@code CLAUDE_*} variable, plus
   * the gateway's address and key and {@code CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1}, plus {@code env}.
   */
  public Run print(Path workdir, String baseUrl, String key, Map<String, String> env, Duration timeout,
      String prompt) {
    Path stdout = workdir.resolveSibling(workdir.getFileName() + ".stdout");
    Path stderr = workdir.resolveSibling(workdir.getFileName() + ".stderr");
    List<String> command = new ArrayList<>(List.of(binary.toString(), "-p", prompt, "--output-format", "json",
        "--allowedTools", "Bash"));
    ProcessBuilder builder = new ProcessBuilder(command).directory(workdir.toFile())
        .redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
    builder.environment().keySet().removeIf(name -> name.startsWith("ANTHROPIC_") || name.startsWith("CLAUDE_"));
    builder.environment().put("HOME", root.resolve("home").toString());
    builder.environment().put("ANTHROPIC_BASE_URL", baseUrl);
    builder.environment().put("ANTHROPIC_API_KEY", key);
    builder.environment().put("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    builder.environment().putAll(env);
    CliProcess.Ended ended = CliProcess.run(builder, timeout);
    return new Run(command, version, ended.exitCode(), ended.timedOut(), ended.took(), CliProcess.read(stdout),
        CliProcess.read(stderr));
  }

  /** Deletes the throwaway home and working directories. */
  @Override
  public void close() {
    CliProcess.delete(root);
  }

  /** One finished (or killed) {@code claude -p}: what it printed and how it ended. */
  public record Run(List<String> command, String version, int exitCode, boolean timedOut, Duration took,
      String stdout, String stderr) {

    /** Everything a failed assertion needs to explain itself. */
    public String describe() {
      return "claude -p (" + version + ") " + (timedOut ? "was killed after its timeout" : "exited " + exitCode)
          + " after " + took.toMillis() + " ms\ncommand: " + command
          + "\n--- stdout ---\n" + stdout + "\n--- stderr ---\n" + stderr + "\n---";
    }
  }
}
