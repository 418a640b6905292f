package io.spillway.local.ollama;

import static io.spillway.local.ollama.OllamaTesting.request;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import io.spillway.server.testing.EventLoopClient;
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

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));

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
    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));
    EventStream stream = response.stream();
    stream.next();

    stream.close();

    assertThat(stream.next()).isNull();
  }

  @Test
  void ollamaChatStreamsOverTheEventLoopClient() {
    OllamaBackend backend = OllamaTesting.backend(
        "http://127.0.0.1:" + server.getAddress().getPort(), FakeClock.at("2026-11-10T10:00:00Z"));
    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));

    try (EventStream stream = response.stream()) {
      assertThat(stream.nonBlocking()).as("relayed from the event loop, no thread per stream").isTrue();
      assertThat(content(stream.poll(), "role")).isEqualTo("assistant");
      assertThat(content(stream.poll(), "content")).isEqualTo("First");
      assertThat(stream.poll()).as("the rest is held back: nothing to give, nothing blocks").isSameAs(SseEvent.PENDING);
      AtomicBoolean ready = new AtomicBoolean();
      stream.onReady(() -> ready.set(true));
      assertThat(ready).isFalse();

      restMayFollow.countDown();

      await().atMost(Duration.ofSeconds(10)).untilTrue(ready);
      List<SseEvent> rest = new ArrayList<>();
      for (SseEvent event = stream.poll(); event != null; event = stream.poll()) {
        if (event == SseEvent.PENDING) {
          AtomicBoolean more = new AtomicBoolean();
          stream.onReady(() -> more.set(true));
          await().atMost(Duration.ofSeconds(10)).untilTrue(more);
        } else {
          rest.add(event);
        }
      }
      assertThat(content(rest.get(0), "content")).isEqualTo(" second");
      assertThat(OllamaTesting.data(rest.get(1)).path("choices").get(0).path("finish_reason").asText()).isEqualTo("stop");
      assertThat(rest.get(rest.size() - 1).isDone()).isTrue();
    }
  }

  @Test
  void aLineThatDoesNotArriveInTimeFailsTheStreamWithATimeout() {
    LocalConfig quick = OllamaTesting.config("http://127.0.0.1:" + server.getAddress().getPort());
    quick = new LocalConfig(true, LocalConfig.Kind.OLLAMA, quick.baseUrl(), quick.modelNames(), null, null,
        Duration.ofSeconds(1), null);
    OllamaBackend backend = new OllamaBackend(quick, OllamaTesting.cloud(), FakeClock.at("2026-11-10T10:00:00Z"),
        new SimpleMeterRegistry(), EventLoopClient.http());
    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));

    try (EventStream stream = response.stream()) {
      stream.next();
      stream.next();
      assertThatThrownBy(stream::next).isInstanceOfSatisfying(UpstreamException.class, e -> {
        assertThat(e.failure()).isEqualTo(UpstreamException.Failure.TIMEOUT);
        assertThat(e.getMessage()).isEqualTo("The local backend (Ollama) sent no whole line within 1s");
      });
    }
  }

  private static String content(SseEvent event, String field) {
    return OllamaTesting.data(event).path("choices").get(0).path("delta").path(field).asText();
  }
}
