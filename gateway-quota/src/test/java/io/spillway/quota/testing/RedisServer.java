package io.spillway.quota.testing;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} on a free loopback port, with append-only persistence in a directory
 * of the test's, so a restart on the same port and directory keeps what was written. Tests that
 * need it call {@link #assumeInstalled()} first: without the binary they are skipped, except on CI
 * ({@code CI=true}) where that is a failure.
 */
public final class RedisServer implements AutoCloseable {
  public static final Path BINARY = Path.of("/usr/bin/redis-server");

  private final Path dir;
  private final int port;
  private Process process;

  private RedisServer(Path dir, int port) {
    this.dir = dir;
    this.port = port;
  }

  public static void assumeInstalled() {
    if (Files.isExecutable(BINARY)) {
      return;
    }
    String reason = BINARY + " is not installed (apt-get install -y redis-server)";
    if ("true".equals(System.getenv("CI"))) {
      Assertions.fail(reason + "; CI must run the Redis tests");
    }
    Assumptions.abort(reason + "; skipping the tests that need a real Redis");
  }

  /** Starts Redis on a free loopback port, persisting to {@code dir}. */
  public static RedisServer start(Path dir) {
    assumeInstalled();
    RedisServer server = new RedisServer(dir, freePort());
    server.startProcess();
    return server;
  }

  /**
   * A Redis that is not running yet, on a free loopback port: give its {@link #uri} to a gateway,
   * then {@link #startAgain} it (to test a replica that starts while Redis is down).
   */
  public static RedisServer notStarted(Path dir) {
    assumeInstalled();
    return new RedisServer(dir, freePort());
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Stops Redis the way an operator does (SIGTERM): it writes its append-only file and exits. */
  public void stop() {
    if (process == null) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  /** Kills Redis with SIGKILL, as a crash or an OOM kill would: only what it fsynced survives. */
  public void crash() {
    if (process == null) {
      return;
    }
    process.destroyForcibly();
    try {
      process.waitFor(20, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    process = null;
  }

  /**
   * Stops the process in its tracks (SIGSTOP): connections stay open and nothing answers, as with a
   * Redis host that hangs. {@link #thaw} lets it go on (SIGCONT).
   */
  public void freeze() {
    signal("STOP");
  }

  /** Lets a {@link #freeze frozen} Redis go on (SIGCONT). */
  public void thaw() {
    signal("CONT");
  }

  private void signal(String name) {
    if (process == null) {
      throw new IllegalStateException("redis-server is not running");
    }
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Starts Redis on the same port and directory after {@link #stop} or {@link #crash}. */
  public void startAgain() {
    if (process == null) {
      startProcess();
    }
  }

  /** Starts Redis again on the same port and directory. */
  public void restart() {
    stop();
    startProcess();
  }

  private void startProcess() {
    try {
      Files.createDirectories(dir);
      process = new ProcessBuilder(List.of(BINARY.toString(),
              "--port", Integer.toString(port), "--bind", "127.0.0.1",
              "--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", dir.toString()))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + BINARY, e);
    }
    await("redis-server on port " + port + " answers PING")
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(20))
        .until(this::answersPing);
  }

  private boolean answersPing() {
    if (!process.isAlive()) {
      throw new IllegalStateException("redis-server exited; see " + dir.resolve("redis.log"));
    }
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] reply = in.readNBytes(7);
      return new String(reply, StandardCharsets.US_ASCII).startsWith("+PONG");
    } catch (IOException e) {
      return false;
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    stop();
  }
}
