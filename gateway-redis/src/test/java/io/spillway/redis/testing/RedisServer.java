package io.spillway.redis.testing;

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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} this test starts on a free loopback port: the one Redis harness of
 * every module's tests. Without persistence ({@link #start()}), or with append-only persistence in a
 * directory of the test's ({@link #start(Path)}), so a restart on the same port and directory keeps
 * what was written. It can be stopped, crashed, emptied, made slow ({@link #stall}) or frozen
 * outright ({@link #freeze}: {@code SIGSTOP} to the process this harness started, never another).
 *
 * <p>Tests that need it are skipped when the binary is missing, except on CI ({@code CI=true})
 * where that is a failure.
 */
public final class RedisServer implements AutoCloseable {
  public static final Path BINARY = Path.of("/usr/bin/redis-server");

  private final Path dir;
  private final int port;
  private Process process;
  private boolean frozen;

  private RedisServer(Path dir, int port) {
    this.dir = dir;
    this.port = port;
  }

  /** Skips the calling test without the binary (fails it with {@code CI=true}). */
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

  /** Starts Redis on a free loopback port, keeping nothing on disk. */
  public static RedisServer start() {
    assumeInstalled();
    RedisServer server = new RedisServer(null, freePort());
    server.startProcess();
    return server;
  }

  /** Starts Redis on a free loopback port, persisting to {@code dir} (append-only, fsync always). */
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

  /** The process id of the redis-server this harness started (null when none runs). */
  public Long pid() {
    return process == null ? null : process.pid();
  }

  /** Stops Redis the way an operator does (SIGTERM): it writes its append-only file and exits. */
  public void stop() {
    if (process == null) {
      return;
    }
    thaw();
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
    frozen = false;
    process = null;
  }

  /** Same as {@link #crash}: without persistence Redis comes back empty with {@link #startAgain}. */
  public void kill() {
    crash();
  }

  /** Starts Redis on the same port (and directory) after {@link #stop} or {@link #crash}. */
  public void startAgain() {
    if (process == null) {
      startProcess();
    }
  }

  /** Starts Redis again on the same port (and directory). */
  public void restart() {
    stop();
    startProcess();
  }

  /**
   * Freezes Redis with {@code SIGSTOP} to the process this harness started: it keeps its port and
   * its connections and answers nobody (a hung Redis, not a down one) until {@link #thaw}.
   */
  public void freeze() {
    signal("STOP");
    frozen = true;
  }

  /** Lets a frozen Redis run again ({@code SIGCONT}); it then answers what was sent meanwhile. */
  public void thaw() {
    if (frozen) {
      signal("CONT");
      frozen = false;
    }
  }

  /**
   * Makes Redis answer nobody for {@code seconds} ({@code DEBUG SLEEP} on a connection of its own):
   * a Redis that is up but too slow. Close the socket when done.
   */
  public Socket stall(double seconds) {
    try {
      Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
      OutputStream out = socket.getOutputStream();
      out.write(("DEBUG SLEEP " + seconds + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return socket;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Empties Redis ({@code FLUSHALL}), as an operator's mistake or an eviction under memory pressure would. */
  public void flushAll() {
    String reply = command("FLUSHALL");
    if (!reply.startsWith("+OK")) {
      throw new IllegalStateException("FLUSHALL answered " + reply);
    }
  }

  /**
   * Sends one inline command on a connection of its own and answers the first line of the reply, or
   * for a bulk string ({@code $n}) its content ({@code null} for a missing value).
   */
  public String command(String inline) {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      out.write((inline + "\r\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = socket.getInputStream();
      String first = line(in);
      if (first.startsWith("$")) {
        return first.equals("$-1") ? null : line(in);
      }
      return first;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int b;
    while ((b = in.read()) != -1 && b != '\n') {
      if (b != '\r') {
        line.append((char) b);
      }
    }
    return line.toString();
  }

  private void signal(String name) {
    if (process == null) {
      throw new IllegalStateException("redis-server is not running");
    }
    try {
      Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
          .redirectErrorStream(true).start();
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

  private void startProcess() {
    List<String> command = new ArrayList<>(List.of(BINARY.toString(),
        "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "", "--enable-debug-command", "local"));
    try {
      ProcessBuilder builder;
      if (dir == null) {
        command.addAll(List.of("--appendonly", "no"));
        builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD);
      } else {
        Files.createDirectories(dir);
        command.addAll(List.of("--appendonly", "yes", "--appendfsync", "always", "--dir", dir.toString()));
        builder = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile()));
      }
      process = builder.start();
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
      throw new IllegalStateException("redis-server exited" + (dir == null ? "" : "; see " + dir.resolve("redis.log")));
    }
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readNBytes(7), StandardCharsets.US_ASCII).startsWith("+PONG");
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

  /** Thaws and stops Redis. */
  @Override
  public void close() {
    stop();
  }
}
