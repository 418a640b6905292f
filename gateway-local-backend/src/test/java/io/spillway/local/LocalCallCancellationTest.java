package io.spillway.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.ClientDisconnect;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.ollama.OllamaTesting;
import io.spillway.server.testing.EventLoopClient;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A client that goes away while a local server is still working on its answer cancels the call:
 * the server sees its connection closed, whichever kind of server and whether streamed or not.
 */
@ExtendWith(EventLoopClient.class)
class LocalCallCancellationTest {
  ServerSocket listener;
  final CountDownLatch requestIn = new CountDownLatch(1);
  final CountDownLatch connectionClosed = new CountDownLatch(1);

  /** A server that reads the request and then answers nothing, noting when its client hangs up. */
  @BeforeEach
  void start() throws IOException {
    listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(() -> {
      try (Socket socket = listener.accept(); InputStream in = socket.getInputStream()) {
        byte[] buffer = new byte[8192];
        while (in.read(buffer) >= 0) {
          requestIn.countDown(); // whatever arrives, the server now "works" on it and never answers
        }
        connectionClosed.countDown();
      } catch (IOException e) {
        connectionClosed.countDown(); // a reset is a close too
      }
    });
  }

  @AfterEach
  void stop() throws IOException {
    listener.close();
  }

  @ParameterizedTest(name = "{0}, {2}, stream {1}")
  @CsvSource({"OLLAMA, false, CHAT_COMPLETIONS", "OLLAMA, true, CHAT_COMPLETIONS", "OPENAI, false, CHAT_COMPLETIONS",
      "OPENAI, true, CHAT_COMPLETIONS", "OLLAMA, true, RESPONSES", "OPENAI, false, RESPONSES", "OPENAI, true, RESPONSES"})
  void clientGoneCancelsALocalCall(LocalConfig.Kind kind, boolean stream, Route route) throws Exception {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "qwen2.5-coder:7b");
    LocalConfig config = new LocalConfig(true, kind, "http://127.0.0.1:" + listener.getLocalPort(), models, null,
        null, Duration.ofSeconds(60), null);
    LocalServer server = LocalBackends.server(config, OllamaTesting.cloud(), FakeClock.at("2026-11-10T10:00:00Z"),
        new SimpleMeterRegistry(), EventLoopClient.http());
    GatewayRequest request = OllamaTesting.request(route, route == Route.RESPONSES
        ? "{\"model\":\"gpt-4o\",\"stream\":" + stream + ",\"store\":false,\"input\":\"hi\"}"
        : "{\"model\":\"gpt-4o\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    ClientDisconnect disconnect = ClientDisconnect.create();
    request.setAttribute(RequestAttributes.CLIENT_DISCONNECT, disconnect);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    CompletableFuture<Void> call = CompletableFuture.runAsync(() -> {
      try {
        Blocking.await(server.callAsync(request));
      } catch (RuntimeException e) {
        failure.set(e);
      }
    }, runnable -> Thread.ofVirtual().start(runnable));
    await().atMost(Duration.ofSeconds(10)).until(() -> requestIn.getCount() == 0);

    disconnect.signal();

    await().atMost(Duration.ofSeconds(10)).until(() -> connectionClosed.getCount() == 0);
    call.get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(failure.get()).isInstanceOf(UpstreamException.class);
  }
}
