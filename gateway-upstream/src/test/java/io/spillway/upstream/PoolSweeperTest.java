package io.spillway.upstream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import okhttp3.ConnectionPool;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The pool's housekeeping runs on a tick, and still closes what OkHttp's own would close. */
class PoolSweeperTest {
  private static final int CALLS = 4;
  private static final Duration TICK = Duration.ofMillis(100);

  private HttpServer server;
  private CountDownLatch allArrived;
  private final ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor();

  @BeforeEach
  void startServer() throws IOException {
    allArrived = new CountDownLatch(CALLS);
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 50);
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/", exchange -> {
      allArrived.countDown();
      try {
        allArrived.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
  }

  @AfterEach
  void stopServer() {
    callers.shutdownNow();
    server.stop(0);
  }

  @Test
  void idleConnectionsBeyondTheLimitAreClosedWithinATick() throws Exception {
    ConnectionPool pool = PoolSweeper.pool(1, Duration.ofMinutes(5), TICK);
    callConcurrently(pool);
    await().atMost(Duration.ofSeconds(5)).until(() -> pool.connectionCount() == 1);
    assertThat(pool.idleConnectionCount()).isEqualTo(1);
  }

  @Test
  void idleConnectionsPastTheirKeepAliveAreClosed() throws Exception {
    // The keep-alive is long enough that a loaded CI machine still sees the connections before they go.
    ConnectionPool pool = PoolSweeper.pool(CALLS, Duration.ofSeconds(3), TICK);
    callConcurrently(pool);
    assertThat(pool.connectionCount()).isEqualTo(CALLS);
    await().atMost(Duration.ofSeconds(15)).until(() -> pool.connectionCount() == 0);
  }

  /** {@link #CALLS} calls that the server holds until all arrived, so each has its own connection. */
  private void callConcurrently(ConnectionPool pool) throws Exception {
    OkHttpClient client = new OkHttpClient.Builder().connectionPool(pool).build();
    String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/";
    List<Future<Integer>> calls = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      calls.add(callers.submit(() -> {
        try (Response response = client.newCall(new Request.Builder().url(url).build()).execute()) {
          response.body().string();
          return response.code();
        }
      }));
    }
    for (Future<Integer> call : calls) {
      assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo(200);
    }
  }
}
