package io.spillway.app.frontend;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LoopbackSockets;
import io.spillway.app.testing.OpenAiStubs;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Keep-alive, idle clients and graceful shutdown. */
class ConnectionLifecycleTest {

  @Test
  void oneConnectionServesManyRequestsInOrder() throws IOException {
    try (GatewayHarness harness = GatewayHarness.start()) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      try (Socket socket = new Socket("127.0.0.1", harness.gateway().port())) {
        socket.setSoTimeout(5_000);
        OutputStream out = socket.getOutputStream();
        BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        String body = chatBody("gpt-4o", "hi", false);
        String request = "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer " + GOLD_KEY
            + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
        // two pipelined requests, then a third after reading: all on one connection
        out.write((request + request).getBytes(StandardCharsets.UTF_8));
        out.flush();
        assertThat(readResponse(in)).startsWith("HTTP/1.1 200");
        assertThat(readResponse(in)).startsWith("HTTP/1.1 200");
        out.write(request.getBytes(StandardCharsets.UTF_8));
        out.flush();
        assertThat(readResponse(in)).startsWith("HTTP/1.1 200");
      }
    }
  }

  @Test
  void aQuietGatewayKeepsReusingOneUpstreamConnection() {
    LoopbackSockets.assumeAvailable();
    try (GatewayHarness harness = GatewayHarness.start()) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      for (int i = 0; i < 20; i++) {
        assertThat(harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi " + i, false)).statusCode())
            .isEqualTo(200);
      }
      // spreading calls over several pools is for thousands of concurrent calls, not for these
      assertThat(LoopbackSockets.establishedTo(harness.cloud.port())).isEqualTo(1);
    }
  }

  @Test
  void idleClientIsClosedWithoutDisturbingOthers() throws IOException {
    try (GatewayHarness harness = GatewayHarness.start("server:\n  idleTimeout: 300ms")) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      try (Socket idle = new Socket("127.0.0.1", harness.gateway().port())) {
        idle.setSoTimeout(10_000);
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.gateway().openConnections() == 1);
        HttpResponse<String> other = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
        assertThat(other.statusCode()).isEqualTo(200);
        assertThat(idle.getInputStream().read()).isEqualTo(-1);
      }
    }
  }

  @Test
  void shutdownFinishesInFlightRequestsAndStopsAccepting() throws Exception {
    GatewayHarness harness = GatewayHarness.start("server:\n  drainTimeout: 10s");
    try {
      harness.cloud.stubFor(post("/v1/chat/completions")
          .willReturn(OpenAiStubs.chatCompletion("finished").withFixedDelay(1_500)));
      CompletableFuture<HttpResponse<String>> inFlight = CompletableFuture.supplyAsync(
          () -> harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false)));
      await().atMost(Duration.ofSeconds(5)).until(() -> harness.gateway().inFlightRequests() == 1);
      int port = harness.gateway().port();

      harness.gateway().close();

      HttpResponse<String> response = inFlight.get();
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains("finished");
      assertThat(refused(port)).isTrue();
    } finally {
      harness.close();
    }
  }

  private static boolean refused(int port) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      return false;
    } catch (ConnectException e) {
      return true;
    } catch (IOException e) {
      return true;
    }
  }

  private static String readResponse(BufferedReader in) throws IOException {
    String status = in.readLine();
    int length = 0;
    String line;
    while (!(line = in.readLine()).isEmpty()) {
      if (line.toLowerCase().startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    char[] body = new char[length];
    int read = 0;
    while (read < length) {
      read += in.read(body, read, length - read);
    }
    return status;
  }
}
