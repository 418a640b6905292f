package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.config.ServerConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.http.Headers;
import io.spillway.core.http.HttpService;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.sse.CloseCause;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A non-blocking stream is relayed from the connection's event loop, through the real server and
 * a real socket: the request's thread is gone once the stream is handed over, a stream with nothing
 * yet is polled again only when it says it is ready, a client that does not read stops the polls,
 * and the end, a failure, the time limit and a client that leaves each finish it once.
 */
class PolledStreamRelayTest {
  private static final String END_OF_CHUNKS = "0\r\n\r\n";

  private final AtomicReference<Thread> requestThread = new AtomicReference<>();
  private GatewayServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(Duration.ofSeconds(1));
    }
  }

  @Test
  void nonBlockingStreamIsRelayedWithoutARequestThread() throws Exception {
    FedStream stream = new FedStream().send(SseEvent.data("{\"n\":1}"));
    start(streaming(stream), Duration.ofMinutes(1));
    try (Socket client = connect()) {
      post(client, "HTTP/1.1");
      String first = readUntil(client.getInputStream(), "{\"n\":1}");
      assertThat(first).startsWith("HTTP/1.1 200").containsIgnoringCase("transfer-encoding: chunked");

      await().atMost(Duration.ofSeconds(5)).until(() -> !requestThread.get().isAlive());
      Thread.ofPlatform().start(() -> stream.send(SseEvent.data("{\"n\":2}")).send(SseEvent.DONE).end());

      String rest = readUntil(client.getInputStream(), END_OF_CHUNKS);
      assertThat(rest).contains("data: {\"n\":2}\n\n").contains("data: [DONE]\n\n");
      assertThat(rest.indexOf("{\"n\":2}")).isLessThan(rest.indexOf("[DONE]"));
    }
    assertThat(stream.virtualPolls()).as("every poll ran on the event loop").isZero();
    await().atMost(Duration.ofSeconds(5)).until(() -> !stream.closes().isEmpty());
  }

  @Test
  void pendingPollResumesWhenReady() throws Exception {
    FedStream stream = new FedStream();
    start(streaming(stream), Duration.ofMinutes(1));
    try (Socket client = connect()) {
      post(client, "HTTP/1.1");
      readUntil(client.getInputStream(), "\r\n\r\n");
      await().atMost(Duration.ofSeconds(5)).until(() -> stream.polls() >= 1);

      for (int i = 1; i <= 3; i++) {
        int n = i;
        Thread.ofPlatform().start(() -> stream.send(SseEvent.data("{\"n\":" + n + "}")));
        readUntil(client.getInputStream(), "{\"n\":" + n + "}");
      }
      Thread.ofPlatform().start(() -> stream.send(SseEvent.DONE).end());
      readUntil(client.getInputStream(), END_OF_CHUNKS);
    }
    // Each event and the end: polled when ready, never spun on while pending.
    assertThat(stream.polls()).isLessThanOrEqualTo(12);
  }

  @Test
  void slowClientStopsPollingUntilWritable() throws Exception {
    String padding = "x".repeat(8 * 1024);
    FedStream stream = FedStream.endless(n -> SseEvent.data("{\"n\":" + n + ",\"pad\":\"" + padding + "\"}"));
    start(streaming(stream), Duration.ofMinutes(1));
    try (Socket client = new Socket()) {
      client.setReceiveBufferSize(16 * 1024);
      client.setSoTimeout(10_000);
      client.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()));
      post(client, "HTTP/1.1");
      readUntil(client.getInputStream(), "\r\n\r\n");

      int stalled = awaitPollsStop(stream);
      assertThat((long) stalled * padding.length())
          .as("what the relay pulled is bounded by the socket buffers and the write high-water mark")
          .isLessThan(32L * 1024 * 1024);

      client.getInputStream().readNBytes(4 * 1024 * 1024);

      await().atMost(Duration.ofSeconds(5)).until(() -> stream.polls() > stalled);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> stream.closes().equals(java.util.List.of(CloseCause.CLIENT_CLOSED)));
  }

  @Test
  void clientGoneClosesAPolledStreamOnce() throws Exception {
    FedStream stream = new FedStream().send(SseEvent.data("{\"n\":1}"));
    start(streaming(stream), Duration.ofMinutes(1));
    try (Socket client = connect()) {
      post(client, "HTTP/1.1");
      readUntil(client.getInputStream(), "{\"n\":1}");
    }

    await().atMost(Duration.ofSeconds(5)).until(() -> !stream.closes().isEmpty());
    stream.send(SseEvent.data("{\"n\":2}")); // a late event finds nobody polling
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
        .until(() -> stream.closes().size() == 1);
    assertThat(stream.closes()).containsExactly(CloseCause.CLIENT_CLOSED);
  }

  @Test
  void streamTimeLimitCutsAPolledStream() throws Exception {
    FedStream stream = new FedStream().send(SseEvent.data("{\"n\":1}"));
    start(streaming(stream), Duration.ofMillis(300));
    try (Socket client = connect()) {
      post(client, "HTTP/1.1");

      String body = readUntil(client.getInputStream(), END_OF_CHUNKS);

      assertThat(body).contains("data: {\"n\":1}\n\n").contains("\"code\":\"stream_time_limit\"");
      assertThat(body.indexOf("{\"n\":1}")).isLessThan(body.indexOf("stream_time_limit"));
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> !stream.closes().isEmpty());
    assertThat(stream.closes()).containsExactly(CloseCause.STREAM_TIME_LIMIT);
  }

  @Test
  void anErrorMidStreamIsFramedAsTheStreamsErrorEvent() throws Exception {
    FedStream stream = new FedStream().send(SseEvent.data("{\"n\":1}"));
    start(streaming(stream), Duration.ofMinutes(1));
    try (Socket client = connect()) {
      post(client, "HTTP/1.1");
      readUntil(client.getInputStream(), "{\"n\":1}");
      Thread.ofPlatform().start(() -> stream.fail(ErrorKind.GATEWAY_TIMEOUT.exception("The upstream stalled")));

      String rest = readUntil(client.getInputStream(), END_OF_CHUNKS);

      assertThat(rest).contains("data: {\"error\":{\"message\":\"The upstream stalled\"")
          .contains("\"code\":\"upstream_timeout\"");
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> !stream.closes().isEmpty());
    assertThat(stream.closes()).containsExactly(CloseCause.CLIENT_CLOSED);
  }

  @Test
  void anErrorInAPolledStreamEndsTheConnectionInsteadOfLeavingItHanging() throws Exception {
    FedStream stream = new FedStream().send(SseEvent.data("{\"n\":1}"));
    start(streaming(stream), Duration.ofMinutes(1));
    try (Socket client = connect()) {
      post(client, "HTTP/1.1");
      readUntil(client.getInputStream(), "{\"n\":1}\n\n");
      Thread.ofPlatform().start(() -> stream.breakWith(new OutOfMemoryError("simulated")));

      ByteArrayOutputStream rest = new ByteArrayOutputStream();
      client.getInputStream().transferTo(rest); // ends only when the server closes

      assertThat(rest.toString(StandardCharsets.UTF_8)).doesNotContain(END_OF_CHUNKS);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> !stream.closes().isEmpty());
    assertThat(stream.closes()).containsExactly(CloseCause.CLIENT_CLOSED);
  }

  @Test
  void anHttp10ClientGetsAPolledStreamEndedByTheClose() throws Exception {
    FedStream stream = new FedStream().send(SseEvent.data("{\"n\":1}"));
    start(streaming(stream), Duration.ofMinutes(1));
    try (Socket client = connect()) {
      post(client, "HTTP/1.0");
      String first = readUntil(client.getInputStream(), "{\"n\":1}\n\n");
      assertThat(first).doesNotContainIgnoringCase("transfer-encoding").containsIgnoringCase("connection: close");
      Thread.ofPlatform().start(() -> stream.send(SseEvent.DONE).end());

      ByteArrayOutputStream rest = new ByteArrayOutputStream();
      client.getInputStream().transferTo(rest); // ends only when the server closes

      assertThat(rest.toString(StandardCharsets.UTF_8)).isEqualTo("data: [DONE]\n\n");
    }
  }

  @Test
  void thePipelinedNextRequestIsAnsweredAfterThePolledStreamsLastWrite() throws Exception {
    FedStream stream = new FedStream().send(SseEvent.data("{\"n\":1}"));
    AtomicInteger served = new AtomicInteger();
    start(request -> served.incrementAndGet() == 1
        ? GatewayResponse.streamed(200, Headers.EMPTY, stream)
        : GatewayResponse.json(200, "{\"second\":true}".getBytes(StandardCharsets.UTF_8)), Duration.ofMinutes(1));
    try (Socket client = connect()) {
      client.getOutputStream().write((request("HTTP/1.1") + request("HTTP/1.1")).getBytes(StandardCharsets.US_ASCII));
      readUntil(client.getInputStream(), "{\"n\":1}");
      assertThat(served).as("the second waits for the stream").hasValue(1);
      Thread.ofPlatform().start(() -> stream.send(SseEvent.DONE).end());

      String rest = readUntil(client.getInputStream(), "{\"second\":true}");

      assertThat(rest.indexOf(END_OF_CHUNKS)).isNotNegative().isLessThan(rest.indexOf("HTTP/1.1 200"));
    }
  }

  private HttpService streaming(FedStream stream) {
    return request -> {
      requestThread.set(Thread.currentThread());
      return GatewayResponse.streamed(200, Headers.EMPTY, stream);
    };
  }

  private void start(HttpService service, Duration streamTimeLimit) {
    ServerConfig config = new ServerConfig("127.0.0.1", 0, null, null, null, null, null, streamTimeLimit,
        null, null, null, null, null, null, null);
    server = new GatewayServer(config, service, FakeClock.at("2026-01-01T00:00:00Z")).start();
  }

  private Socket connect() throws IOException {
    Socket client = new Socket(InetAddress.getLoopbackAddress(), server.port());
    client.setSoTimeout(10_000);
    return client;
  }

  private static void post(Socket client, String version) throws IOException {
    client.getOutputStream().write(request(version).getBytes(StandardCharsets.US_ASCII));
    client.getOutputStream().flush();
  }

  private static String request(String version) {
    String body = "{\"model\":\"gpt-4o\",\"stream\":true}";
    return "POST /v1/chat/completions " + version + "\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Content-Length: " + body.length() + "\r\n\r\n" + body;
  }

  /** Reads until {@code marker} has arrived (the socket timeout fails the test otherwise); returns what was read. */
  private static String readUntil(InputStream in, String marker) throws IOException {
    ByteArrayOutputStream read = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed before " + marker + ": " + read.toString(StandardCharsets.UTF_8));
      }
      read.write(b);
      if (b == marker.charAt(marker.length() - 1) && read.toString(StandardCharsets.UTF_8).endsWith(marker)) {
        return read.toString(StandardCharsets.UTF_8);
      }
    }
  }

  /** Waits until the relay stops polling (the client's socket is full); returns the polls so far. */
  private static int awaitPollsStop(FedStream stream) {
    int[] last = {-1};
    await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(200)).until(() -> {
      int now = stream.polls();
      boolean still = now == last[0];
      last[0] = now;
      return still;
    });
    return last[0];
  }
}
