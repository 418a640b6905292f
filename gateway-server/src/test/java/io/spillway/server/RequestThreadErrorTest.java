package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.ServerConfig;
import io.spillway.core.http.HttpService;
import io.spillway.core.testing.FakeClock;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What a client gets when serving its request fails with an {@link Error}, e.g. out of memory. */
class RequestThreadErrorTest {

  @Test
  void anErrorOnTheRequestThreadIsAnswered500AndTheConnectionClosed() throws Exception {
    ServerConfig config = ServerConfig.DEFAULTS.withHost("127.0.0.1").withPort(0);
    HttpService failing = request -> {
      throw new OutOfMemoryError("simulated: Java heap space");
    };
    GatewayServer server = new GatewayServer(config, failing, FakeClock.at("2026-01-01T00:00:00Z")).start();
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port())) {
      socket.setSoTimeout(10_000);
      String body = "{\"model\":\"gpt-4o\"}";
      socket.getOutputStream().write(("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Content-Length: " + body.length() + "\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII));

      String answer = readUntilClosed(socket.getInputStream());

      assertThat(answer).startsWith("HTTP/1.1 500");
      assertThat(answer.toLowerCase()).contains("connection: close");
      assertThat(answer).contains("\"type\":\"server_error\"").contains("\"code\":\"internal_error\"");
    } finally {
      server.stop(Duration.ofSeconds(1));
    }
  }

  /** Everything the server sends until it closes the connection (the socket timeout fails the test otherwise). */
  private static String readUntilClosed(InputStream in) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    in.transferTo(out);
    return out.toString(StandardCharsets.UTF_8);
  }
}
