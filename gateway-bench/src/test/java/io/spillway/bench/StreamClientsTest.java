package io.spillway.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** What {@code bench/stream-scale.sh} counts as a completed stream, a failed one, and a first byte. */
class StreamClientsTest {
  @Test
  void everyStreamThatReachesDoneCompletesAndHasItsFirstByteTimed() throws Exception {
    try (SlowUpstream upstream = SlowUpstream.start(0, new SlowStreamShape(2, Duration.ofMillis(5)), 1, 1000)) {
      StreamClients.Result result = StreamClients.run(chatUrl(upstream.port()), "k", 50, 1000, "direct", false);

      assertThat(result.ok()).isEqualTo(50);
      assertThat(result.errors()).isZero();
      assertThat(result.ttfbNanos()).hasSize(50).allSatisfy(nanos -> assertThat(nanos).isPositive());
      assertThat(result.line()).startsWith("STREAMS label=direct n=50 ok=50 errors=0 ttfb_p50_ms=");
    }
  }

  @Test
  void aWarmUpStreamEndsAtItsFirstEventAndStillCounts() throws Exception {
    try (SlowUpstream upstream = SlowUpstream.start(0, new SlowStreamShape(1000, Duration.ofSeconds(1)), 1, 1000)) {
      StreamClients.Result result = StreamClients.run(chatUrl(upstream.port()), "k", 20, 1000, "warmup", true);

      assertThat(result.ok()).isEqualTo(20);
      assertThat(result.ttfbNanos()).hasSize(20);
    }
  }

  @Test
  void aStreamCutBeforeDoneIsAnError() throws Exception {
    try (OneAnswerServer server = new OneAnswerServer(sse("data: {\"choices\":[]}\n\n"))) {
      StreamClients.Result result = StreamClients.run(chatUrl(server.port()), "k", 3, 1000, "cut", false);

      assertThat(result.ok()).isZero();
      assertThat(result.errors()).isEqualTo(3);
      assertThat(result.errorSamples()).allSatisfy(sample -> assertThat(sample).contains("without [DONE]"));
    }
  }

  @Test
  void anErrorEventIsAnError() throws Exception {
    try (OneAnswerServer server =
        new OneAnswerServer(sse("data: {\"error\":{\"message\":\"upstream failed\"}}\n\ndata: [DONE]\n\n"))) {
      StreamClients.Result result = StreamClients.run(chatUrl(server.port()), "k", 2, 1000, "failing", false);

      assertThat(result.errors()).isEqualTo(2);
      assertThat(result.errorSamples()).allSatisfy(sample -> assertThat(sample).contains("error event"));
    }
  }

  @Test
  void anEventLongerThanTheReadBufferIsReadWholeAndDoneStillFound() throws Exception {
    String longEvent = "data: {\"choices\":[{\"delta\":{\"content\":\"" + "x".repeat(5000) + "\"}}]}\r\n\r\n";
    try (OneAnswerServer server = new OneAnswerServer(sse(longEvent + "data: [DONE]\r\n\r\n"))) {
      StreamClients.Result result = StreamClients.run(chatUrl(server.port()), "k", 2, 1000, "long", false);

      assertThat(result.ok()).as(result.errorSamples().toString()).isEqualTo(2);
    }
  }

  private static URI chatUrl(int port) {
    return URI.create("http://127.0.0.1:" + port + "/v1/chat/completions");
  }

  /** An HTTP/1.1 200 event-stream answer that ends when the connection closes. */
  private static String sse(String events) {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + events;
  }

  /** Gives every connection the same raw answer once its request head has arrived, then closes it. */
  private static final class OneAnswerServer implements AutoCloseable {
    private final ServerSocket socket;

    OneAnswerServer(String answer) throws IOException {
      socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
      Thread.ofVirtual().start(() -> {
        while (!socket.isClosed()) {
          try {
            Socket connection = socket.accept();
            Thread.ofVirtual().start(() -> answer(connection, answer));
          } catch (IOException e) {
            return;
          }
        }
      });
    }

    private static void answer(Socket connection, String answer) {
      try (connection) {
        InputStream in = connection.getInputStream();
        int matched = 0;
        byte[] end = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        while (matched < end.length) {
          int b = in.read();
          if (b < 0) {
            return;
          }
          matched = b == end[matched] ? matched + 1 : (b == end[0] ? 1 : 0);
        }
        OutputStream out = connection.getOutputStream();
        out.write(answer.getBytes(StandardCharsets.UTF_8));
        out.flush();
      } catch (IOException e) {
        // the client went away first
      }
    }

    int port() {
      return socket.getLocalPort();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }
}
