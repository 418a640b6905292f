package io.spillway.local.ollama;

import static io.spillway.local.ollama.OllamaTesting.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.server.testing.EventLoopClient;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Ollama ends each stream's chunked body a moment after its done line. The gateway reads that end
 * instead of cutting the connection, so the next request of the same event loop reuses it.
 */
@ExtendWith(EventLoopClient.class)
class OllamaConnectionReuseTest {
  final Set<Integer> clientPorts = ConcurrentHashMap.newKeySet();
  final Semaphore endMayFollow = new Semaphore(0);
  final AtomicInteger bodiesEnded = new AtomicInteger();
  HttpServer server;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/api/chat", exchange -> {
      clientPorts.add(exchange.getRemoteAddress().getPort());
      exchange.getRequestBody().readAllBytes();
      exchange.getResponseHeaders().add("Content-Type", "application/x-ndjson");
      exchange.sendResponseHeaders(200, 0); // chunked, as Ollama streams
      OutputStream out = exchange.getResponseBody();
      out.write(OllamaStubs.chatStreamBody("llama3.2:3b", "stop", 5, 2, "Hi").getBytes(StandardCharsets.UTF_8));
      out.flush();
      try {
        // The body's last chunk comes only once the client has its done line and closed the stream.
        endMayFollow.tryAcquire(20, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      out.close();
      bodiesEnded.incrementAndGet();
    });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  @Test
  void aFinishedStreamLeavesItsConnectionForTheNextRequest() {
    OllamaBackend backend = OllamaTesting.backend("http://127.0.0.1:" + server.getAddress().getPort(),
        FakeClock.at("2026-11-10T10:00:00Z"));
    Executor loop = EventLoopClient.loop();

    for (int i = 1; i <= 3; i++) {
      GatewayRequest request = request(Route.CHAT_COMPLETIONS,
          "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
      request.setAttribute(RequestAttributes.CONNECTION_LOOP, loop);
      List<SseEvent> events = OllamaTesting.drain(Blocking.await(backend.callAsync(request)));
      assertThat(events.get(events.size() - 1).isDone()).isTrue();

      endMayFollow.release();
      int ended = i;
      await().atMost(Duration.ofSeconds(10)).until(() -> bodiesEnded.get() == ended);
    }

    assertThat(clientPorts).as("one connection for the three streams").hasSize(1);
  }
}
