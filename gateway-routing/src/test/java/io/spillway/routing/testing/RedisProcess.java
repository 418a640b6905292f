package io.spillway.routing.testing;

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
 * A real {@code redis-server} on a free loopback port, without persistence. Without the binary the
 * test is skipped, except on CI ({@code CI=true}), where that is a failure.
 */
public final class RedisProcess implements AutoCloseable {
  private static final Path BINARY = Path.of("/usr/bin/redis-server");

  private final int port;
  private Process process;

  private RedisProcess(int port) {
    this.port = port;
  }

  public static RedisProcess start() {
    if (!Files.isExecutable(BINARY)) {
      String reason = BINARY + " is not installed (apt-get install -y redis-server)";
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(reason + "; CI must run the Redis tests");
      }
      Assumptions.abort(reason + "; skipping the tests that need a real Redis");
    }
    RedisProcess redis = new RedisProcess(freePort());
    redis.launch();
    return redis;
  }

  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** Kills Redis (SIGKILL), as a crash would; it comes back empty with {@link #startAgain}. */
  public void kill() {
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

  /** Starts Redis again on the same port. */
  public void startAgain() {
    if (process == null) {
      launch();
    }
  }

  /**
   * Makes Redis answer nobody for {@code seconds} ({@code DEBUG SLEEP} on a connection of its own):
   * a Redis that is up but too slow.
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
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      out.write("FLUSHALL\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      String reply = new String(socket.getInputStream().readNBytes(5), StandardCharsets.US_ASCII);
      if (!reply.equals("+OK\r\n")) {
        throw new IllegalStateException("FLUSHALL answered " + reply);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private void launch() {
    try {
      process = new ProcessBuilder(List.of(BINARY.toString(), "--port", Integer.toString(port),
              "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--enable-debug-command", "local"))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
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
      throw new IllegalStateException("redis-server exited");
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

  @Override
  public void close() {
    kill();
  }
}
