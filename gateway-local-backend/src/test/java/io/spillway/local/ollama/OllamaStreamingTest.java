package io.spillway.local.ollama;

import static io.spillway.local.ollama.OllamaTesting.request;
import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import io.spillway.local.testing.EventLoopClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The NDJSON stream is relayed as it arrives: an Ollama stand-in that holds back the rest of its
 * answer until the test lets it go shows that the first events are out before the stream is complete.
 */
@ExtendWith(EventLoopClient.class)
class OllamaStreamingTest {
  final CountDownLatch restMayFollow = new CountDownLatch(1);
  final CountDownLatch finished = new CountDownLatch(1);
  HttpServer server;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/api/chat", exchange -> {
      exchange.getRequestBody().readAllBytes();
      exchange.getResponseHeaders().add("Content-Type", "application/x-ndjson");
      exchange.sendResponseHeaders(200, 0);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write((OllamaStubs.chatLine("llama3.2:3b", "First") + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
        if (!restMayFollow.await(20, TimeUnit.SECONDS)) {
          return;
        }
        out.write((OllamaStubs.chatLine("llama3.2:3b", " second") + "\n"
            + OllamaStubs.chatFinalLine("llama3.2:3b", "stop", 5, 2) + "\n").getBytes(StandardCharsets.UTF_8));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        finished.countDown();
      }
    });
    server.start();
  }

  @AfterEach
  void stop() {
    restMayFollow.countDown();
    server.stop(0);
  }

  @Test
  void eventsArriveBeforeTheStreamIsComplete() throws InterruptedException {
    OllamaBackend backend = OllamaTesting.backend(
        "http://127.0.0.1:" + server.getAddress().getPort(), FakeClock.at("2026-11-10T10:00:00Z"));

    GatewayResponse response = backend.call(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));

    try (EventStream stream = response.stream()) {
      SseEvent role = stream.next();
      SseEvent first = stream.next();
      assertThat(OllamaTesting.data(role).path("choices").get(0).path("delta").path("role").asText())
          .isEqualTo("assistant");
      assertThat(OllamaTesting.data(first).path("choices").get(0).path("delta").path("content").asText())
          .isEqualTo("First");
      assertThat(finished.getCount()).as("the stand-in is still holding back the rest").isEqualTo(1);

      restMayFollow.countDown();
      assertThat(OllamaTesting.data(stream.next()).path("choices").get(0).path("delta").path("content").asText())
          .isEqualTo(" second");
      assertThat(OllamaTesting.data(stream.next()).path("choices").get(0).path("finish_reason").asText())
          .isEqualTo("stop");
      assertThat(stream.next().isDone()).isTrue();
      assertThat(stream.next()).isNull();
    }
  }

  @Test
  void aStreamClosedEarlyEndsAtOnce() {
    OllamaBackend backend = OllamaTesting.backend(
        "http://127.0.0.1:" + server.getAddress().getPort(), FakeClock.at("2026-11-10T10:00:00Z"));
    GatewayResponse response = backend.call(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
    EventStream stream = response.stream();
    stream.next();

    stream.close();

    assertThat(stream.next()).isNull();
  }
}
