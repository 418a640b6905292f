package io.spillway.quota.ratelimit;

import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Assumptions;

/**
 * A real {@code redis-server} on a free loopback port, without persistence. Skips the test when the
 * binary is missing, except with {@code CI=true}, where that is a failure.
 */
final class RedisServerProcess implements AutoCloseable {
  private final int port;
  private Process process;

  private RedisServerProcess(int port) {
    this.port = port;
  }

  static RedisServerProcess start() {
    String binary = findBinary();
    if (binary == null) {
      if ("true".equals(System.getenv("CI"))) {
        fail("redis-server is not installed, and CI=true requires the Redis tests to run");
      }
      Assumptions.abort("redis-server is not installed (apt-get install redis-server); skipping the Redis tests");
    }
    RedisServerProcess redis = new RedisServerProcess(freePort());
    redis.launch(binary);
    return redis;
  }

  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** Stops the server; {@link #restart()} brings it back on the same port, empty. */
  void stop() {
    process.destroy();
    await().atMost(Duration.ofSeconds(10)).until(() -> !process.isAlive());
  }

  void restart() {
    launch(findBinary());
  }

  private void launch(String binary) {
    try {
      process = new ProcessBuilder(binary, "--port", Integer.toString(port), "--bind", "127.0.0.1",
          "--save", "", "--appendonly", "no", "--protected-mode", "yes")
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD)
          .start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start redis-server", e);
    }
    await().atMost(Duration.ofSeconds(10)).until(this::answersPing);
  }

  private boolean answersPing() {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      OutputStream out = socket.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] answer = in.readNBytes(7);
      return new String(answer, StandardCharsets.US_ASCII).equals("+PONG\r\n");
    } catch (IOException e) {
      return false;
    }
  }

  private static String findBinary() {
    for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin:/usr/local/bin").split(":")) {
      Path candidate = Path.of(dir, "redis-server");
      if (Files.isExecutable(candidate)) {
        return candidate.toString();
      }
    }
    return null;
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() {
    if (process != null && process.isAlive()) {
      stop();
    }
  }
}
