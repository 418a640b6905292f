package io.spillway.app.scratch;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.Socket;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ScratchTest {
  @Test
  void t() throws Exception {
    long t0 = System.nanoTime();
    try (GatewayHarness harness = GatewayHarness.start("server:\n  idleTimeout: 300ms")) {
      System.err.println("started " + (System.nanoTime() - t0) / 1e6);
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
      try (Socket idle = new Socket("127.0.0.1", harness.gateway().port())) {
        idle.setSoTimeout(10_000);
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.gateway().openConnections() == 1);
        System.err.println("awaited " + (System.nanoTime() - t0) / 1e6);
        var other = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
        System.err.println("posted " + other.statusCode() + " " + (System.nanoTime() - t0) / 1e6);
        System.err.println("read " + idle.getInputStream().read() + " " + (System.nanoTime() - t0) / 1e6);
      }
      System.err.println("closing " + (System.nanoTime() - t0) / 1e6);
    }
    System.err.println("closed " + (System.nanoTime() - t0) / 1e6);
  }
}
