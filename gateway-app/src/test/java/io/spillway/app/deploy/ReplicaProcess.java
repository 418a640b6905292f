package io.spillway.app.deploy;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One Spillway replica as users run it: {@code java -jar spillway.jar serve --config FILE}, a process
 * of its own on a loopback port, its output in a file.
 */
final class ReplicaProcess implements AutoCloseable {
  final String name;
  final int port;
  private final Path config;
  private final Path log;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private Process process;

  private ReplicaProcess(String name, int port, Path config, Path log) {
    this.name = name;
    this.port = port;
    this.config = config;
    this.log = log;
  }

  /** Starts the replica's process with {@code configYaml}; {@link #awaitReady} waits for it to serve. */
  static ReplicaProcess start(String name, int port, Path dir, String configYaml) {
    try {
      Path config = dir.resolve(name + ".yaml");
      Files.writeString(config, configYaml);
      ReplicaProcess replica = new ReplicaProcess(name, port, config, dir.resolve(name + ".log"));
      replica.launch();
      return replica;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void launch() throws IOException {
    // Small heap and the serial collector: seven JVMs share two cores in this test's world.
    process = new ProcessBuilder(List.of(PackagedJar.java(), "-Xmx256m", "-XX:+UseSerialGC",
            "--enable-native-access=ALL-UNNAMED", "-jar", PackagedJar.path().toString(),
            "serve", "--config", config.toString()))
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
        .start();
  }

  /** Returns once the replica's {@code /readyz} answers 200. */
  ReplicaProcess awaitReady() {
    try {
      await(name + " is ready").atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200))
          .until(() -> {
            if (!process.isAlive()) {
              throw new IllegalStateException(name + " exited:\n" + logTail());
            }
            return status("/readyz") == 200;
          });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(name + " was not ready within 3 minutes; its log ends:\n" + logTail(), e);
    }
    return this;
  }

  String baseUrl() {
    return "http://127.0.0.1:" + port;
  }

  long pid() {
    return process.pid();
  }

  boolean alive() {
    return process != null && process.isAlive();
  }

  /** Kills the replica with SIGKILL, as an OOM kill or a lost host would. */
  void kill() {
    process.destroyForcibly();
    try {
      process.waitFor(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  HttpResponse<String> get(String path, String token) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(baseUrl() + path)).timeout(Duration.ofSeconds(5));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private int status(String path) {
    try {
      return get(path, null).statusCode();
    } catch (UncheckedIOException e) {
      return -1;
    }
  }

  String logTail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      process.destroy();
      try {
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public String toString() {
    return name + " (127.0.0.1:" + port + ")";
  }
}
