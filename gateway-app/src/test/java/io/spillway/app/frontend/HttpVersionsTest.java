package io.spillway.app.frontend;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What each HTTP version gets, on raw sockets through the real gateway: HTTP/1.0 clients a stream
 * delimited by the connection's close (they cannot read chunked encoding), other major versions in
 * HTTP/1 framing a 505, and an over-long chunk extension a 400.
 */
class HttpVersionsTest {
  private GatewayHarness harness;

  @BeforeEach
  void start() {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "Hel", "lo")));
  }

  @AfterEach
  void stop() {
    harness.close();
  }

  @Test
  void anHttp10ClientGetsAStreamThatEndsWhenTheConnectionCloses() throws IOException {
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true))
          .replaceFirst("HTTP/1.1", "HTTP/1.0"));

      String answer = new String(client.input().readAllBytes(), StandardCharsets.UTF_8);

      String head = answer.substring(0, answer.indexOf("\r\n\r\n")).toLowerCase();
      String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
      assertThat(head).startsWith("http/1.1 200").contains("content-type: text/event-stream")
          .contains("connection: close").doesNotContain("transfer-encoding").doesNotContain("content-length");
      assertThat(body).as("the events themselves, with no chunk sizes between them")
          .startsWith("data: {").contains("Hel").contains("lo").endsWith("data: [DONE]\n\n");
    }
  }

  @Test
  void anHttp10ClientAskingForKeepAliveStillGetsAClosedStream() throws IOException {
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true),
          "Connection: keep-alive").replaceFirst("HTTP/1.1", "HTTP/1.0"));

      String answer = new String(client.input().readAllBytes(), StandardCharsets.UTF_8);

      assertThat(answer.toLowerCase()).contains("connection: close").doesNotContain("transfer-encoding");
      assertThat(answer).endsWith("data: [DONE]\n\n");
    }
  }

  @Test
  void anHttp11ClientStillGetsAChunkedStreamOnAKeptConnection() throws IOException {
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true)));

      RawHttp.Answer answer = client.read();

      assertThat(answer.header("transfer-encoding")).isEqualTo("chunked");
      assertThat(answer.header("connection")).isNull();
      assertThat(answer.body()).endsWith("data: [DONE]\n\n");
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"HTTP/9.9", "HTTP/2.0", "HTTP/3.0", "HTTP/0.9"})
  void anUnsupportedHttpVersionGets505AndAClose(String version) throws IOException {
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false))
          .replaceFirst("HTTP/1.1", version));

      RawHttp.Answer answer = client.read();

      assertThat(answer.status()).isEqualTo(505);
      assertThat(answer.body()).contains("\"code\":\"http_version_not_supported\"").contains(version);
      assertThat(answer.header("connection")).isEqualTo("close");
      assertThat(client.closedByPeer()).isTrue();
    }
    assertThat(harness.cloud.getAllServeEvents()).as("never served as HTTP/1.1").isEmpty();
  }

  @Test
  void anOverLongChunkExtensionGets400Not414() throws IOException {
    String body = chatBody("gpt-4o", "hi", false);
    String extension = ";ext=" + "x".repeat(60 * 1024);
    String request = "POST /v1/chat/completions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer " + GOLD_KEY
        + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + Integer.toHexString(body.length()) + extension + "\r\n" + body + "\r\n0\r\n\r\n";
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(request);

      RawHttp.Answer answer = client.read();

      assertThat(answer.status()).isEqualTo(400);
      assertThat(answer.body()).contains("\"type\":\"invalid_request_error\"").contains("chunk");
    }
    assertThat(harness.cloud.getAllServeEvents()).isEmpty();
  }

  @Test
  void anOverLongRequestLineStillGets414() throws IOException {
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send("GET /v1/models?" + "q".repeat(10_000) + " HTTP/1.1\r\nHost: gateway\r\n\r\n");

      assertThat(client.read().status()).isEqualTo(414);
    }
  }
}
