package io.spillway.server.client;

import static io.spillway.server.client.ClientTesting.headFailure;
import static io.spillway.server.client.ClientTesting.post;
import static io.spillway.server.client.ClientTesting.withTimeouts;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamEventStream;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.server.EventLoops;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every phase of an exchange is bounded: the connection by the connect timeout, the wait for the
 * answer's head by the head timeout, a buffered answer by the whole timeout. A timed-out exchange
 * closes its connection, so nothing is left running upstream on the client's account.
 */
@Timeout(60)
class ClientTimeoutsTest {
  static final Duration SHORT = Duration.ofMillis(300);

  final EventLoops loops = new EventLoops(1);
  final NettyUpstreamHttp client = new NettyUpstreamHttp(loops, ClientSettings.DEFAULTS, Ticker.system());
  FakeUpstream upstream;

  @AfterEach
  void stop() {
    if (upstream != null) {
      upstream.close();
    }
    loops.close();
  }

  @Test
  void aClosedPortFailsAsConnectFailedAtOnce() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    UpstreamExchange exchange = client.send(post(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions")));

    await().atMost(Duration.ofSeconds(1)).until(exchange.head()::isDone);
    assertThat(headFailure(exchange).failure()).isEqualTo(UpstreamException.Failure.CONNECT_FAILED);
  }

  @Test
  void anUpstreamThatDoesNotAcceptFailsAsConnectFailedWithinTheConnectTimeout() throws IOException {
    // A listening socket whose accept queue is full drops further SYNs: the connect hangs.
    try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      List<Socket> queued = new ArrayList<>();
      try {
        for (int i = 0; i < 4; i++) {
          Socket socket = new Socket();
          queued.add(socket);
          try {
            socket.connect(full.getLocalSocketAddress(), 200);
          } catch (SocketTimeoutException e) {
            break; // the queue is full
          }
        }
        UpstreamExchange exchange = client.send(withTimeouts(
            post(URI.create("http://127.0.0.1:" + full.getLocalPort() + "/v1/chat/completions")),
            SHORT, Duration.ofSeconds(30), null));

        await().atMost(Duration.ofSeconds(2)).until(exchange.head()::isDone);
        assertThat(headFailure(exchange).failure()).isEqualTo(UpstreamException.Failure.CONNECT_FAILED);
      } finally {
        for (Socket socket : queued) {
          socket.close();
        }
      }
    }
  }

  @Test
  void aTlsUpstreamThatNeverAnswersTheHandshakeFailsAsConnectFailedWithinTheConnectTimeout() throws IOException {
    // The TCP connection is made at once; the TLS handshake, part of connecting, never gets a reply.
    try (ServerSocket mute = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      CountDownLatch closedByTheClient = new CountDownLatch(1);
      Thread.ofVirtual().start(() -> {
        try (Socket accepted = mute.accept()) {
          while (accepted.getInputStream().read() >= 0) {
            // the ClientHello, left unanswered
          }
          closedByTheClient.countDown();
        } catch (IOException e) {
          closedByTheClient.countDown();
        }
      });
      UpstreamExchange exchange = client.send(withTimeouts(
          post(URI.create("https://127.0.0.1:" + mute.getLocalPort() + "/v1/chat/completions")),
          SHORT, Duration.ofSeconds(30), null));

      await().atMost(Duration.ofSeconds(2)).until(exchange.head()::isDone);
      assertThat(headFailure(exchange).failure()).isEqualTo(UpstreamException.Failure.CONNECT_FAILED);
      await().atMost(Duration.ofSeconds(2)).until(() -> closedByTheClient.getCount() == 0);
    }
  }

  @Test
  void anUpstreamThatSendsNoHeadTimesOutAndItsConnectionIsClosed() {
    upstream = FakeUpstream.http1(FakeUpstream.silent());

    UpstreamExchange exchange = client.send(withTimeouts(post(upstream.uri("/a")), ClientTesting.CONNECT, SHORT, null));

    await().atMost(Duration.ofSeconds(2)).until(exchange.head()::isDone);
    UpstreamException failure = headFailure(exchange);
    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.TIMEOUT);
    assertThat(failure.getMessage()).contains("head");
    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));
  }

  @Test
  void aBufferedAnswerThatDoesNotFinishWithinTheWholeTimeoutFails() {
    upstream = FakeUpstream.http1(FakeUpstream.headOnly());

    UpstreamExchange exchange = client.send(withTimeouts(post(upstream.uri("/a")), ClientTesting.CONNECT,
        ClientTesting.HEAD, Duration.ofSeconds(2)));

    // A buffered answer's head is handed over with its whole body, so the waiter learns of the
    // timeout from the head itself.
    UpstreamException failure = catchThrowableOfType(UpstreamException.class, () -> UpstreamCalls.head(exchange));
    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.TIMEOUT);
    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));
  }

  @Test
  void aStreamSendingOnlyKeepAliveCommentsTimesOutPerEventAndItsConnectionIsClosed() {
    upstream = FakeUpstream.http1((ctx, request) -> {
      HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
      head.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
      head.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
      ctx.writeAndFlush(head);
      ctx.executor().scheduleAtFixedRate(() -> {
        if (ctx.channel().isActive()) {
          ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer(": keep-alive\n\n", StandardCharsets.UTF_8)));
        }
      }, 0, 50, TimeUnit.MILLISECONDS);
    });
    UpstreamExchange exchange = client.send(ClientTesting.stream(upstream.uri("/a"), false));
    assertThat(UpstreamCalls.head(exchange).status()).isEqualTo(200);
    UpstreamEventStream events = new UpstreamEventStream("cloud", exchange, SHORT, () -> {});
    AtomicReference<UpstreamException> failure = new AtomicReference<>();

    await().atMost(Duration.ofSeconds(3)).until(() -> {
      try {
        assertThat(events.poll()).isSameAs(SseEvent.PENDING);
        return false;
      } catch (UpstreamException e) {
        failure.set(e);
        return true;
      }
    });

    assertThat(failure.get().failure()).isEqualTo(UpstreamException.Failure.TIMEOUT);
    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));
  }
}
