package io.spillway.server.client;

import static io.spillway.server.client.ClientTesting.post;
import static io.spillway.server.client.ClientTesting.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.handler.codec.http2.DefaultHttp2GoAwayFrame;
import io.netty.handler.codec.http2.DefaultHttp2ResetFrame;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.util.concurrent.EventExecutor;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.testing.FakeClock;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.server.EventLoops;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * HTTP/2 to the upstream: with prior knowledge (h2c) to a plain-HTTP upstream, or by ALPN over TLS
 * where the upstream offers it (HTTP/1.1 where it does not). Concurrent exchanges of one event loop
 * share one connection, each on a stream of its own; a connection the upstream is leaving (GOAWAY)
 * or has closed gets no new streams.
 */
@Timeout(60)
class Http2ConnectionTest {
  @TempDir static Path dir;
  static TestCertificate certificate;

  final EventLoops loops = new EventLoops(2);
  NettyUpstreamHttp client;
  FakeUpstream upstream;

  @BeforeAll
  static void makeCertificate() throws Exception {
    certificate = TestCertificate.create(dir);
  }

  @AfterEach
  void stop() {
    upstream.close();
    loops.close();
  }

  private NettyUpstreamHttp client() throws Exception {
    return new NettyUpstreamHttp(loops, new ClientSettings(Duration.ofSeconds(30), 8, 64 * 1024),
        FakeClock.at("2026-01-01T00:00:00Z"), certificate.trustManagers());
  }

  @Test
  void h2cMultiplexesConcurrentExchangesOnOneConnectionPerLoop() throws Exception {
    client = client();
    HeldAnswers held = new HeldAnswers();
    upstream = FakeUpstream.h2c(held);
    List<UpstreamExchange> exchanges = new ArrayList<>();
    for (EventExecutor loop : loops.workers()) {
      for (int i = 0; i < 10; i++) {
        exchanges.add(client.send(post(upstream.uri("/v1/chat/completions"), loop, true)));
      }
    }
    held.awaitRequests(20);
    held.release("multiplexed");

    for (UpstreamExchange exchange : exchanges) {
      assertThat(UpstreamCalls.head(exchange).protocol()).isEqualTo("h2");
      assertThat(text(exchange)).isEqualTo("multiplexed");
    }
    assertThat(upstream.accepted).hasValue(2);
    assertThat(upstream.protocols).containsExactly("h2", "h2");
  }

  @Test
  void tlsSpeaksH2WhenTheUpstreamOffersItByAlpn() throws Exception {
    client = client();
    HeldAnswers held = new HeldAnswers();
    upstream = FakeUpstream.tls(certificate, held, "h2", "http/1.1");
    EventExecutor loop = loops.workers().next();
    List<UpstreamExchange> exchanges = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      exchanges.add(client.send(post(upstream.uri("/a"), loop, false)));
    }
    held.awaitRequests(5);
    held.release("over h2");

    for (UpstreamExchange exchange : exchanges) {
      assertThat(UpstreamCalls.head(exchange).protocol()).isEqualTo("h2");
      assertThat(text(exchange)).isEqualTo("over h2");
    }
    assertThat(upstream.accepted).hasValue(1);
  }

  @Test
  void tlsSpeaksHttp1WhenTheUpstreamOffersOnlyThat() throws Exception {
    client = client();
    upstream = FakeUpstream.tls(certificate, FakeUpstream.ok("over http/1.1"), "http/1.1");
    EventExecutor loop = loops.workers().next();

    UpstreamExchange first = client.send(post(upstream.uri("/a"), loop, false));
    assertThat(UpstreamCalls.head(first).protocol()).isEqualTo("http/1.1");
    assertThat(text(first)).isEqualTo("over http/1.1");
    assertThat(text(client.send(post(upstream.uri("/a"), loop, false)))).isEqualTo("over http/1.1");

    assertThat(upstream.protocols).containsExactly("http/1.1");
  }

  @Test
  void anUpstreamWhoseCertificateIsNotTrustedFailsAsConnectFailed() throws Exception {
    client = new NettyUpstreamHttp(loops, ClientSettings.DEFAULTS, FakeClock.at("2026-01-01T00:00:00Z")); // JDK trust
    upstream = FakeUpstream.tls(certificate, FakeUpstream.ok("never"), "h2", "http/1.1");

    UpstreamException failure = ClientTesting.headFailure(client.send(post(upstream.uri("/a"))));

    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.CONNECT_FAILED);
    assertThat(upstream.requests).hasValue(0);
  }

  @Test
  void aTlsConnectionClosedDuringItsHandshakeFailsAsConnectFailedAndTheNextExchangeConnectsAgain() throws Exception {
    client = client();
    upstream = FakeUpstream.tls(certificate, FakeUpstream.ok("second try"), "h2", "http/1.1");
    upstream.dropNext.set(1);
    EventExecutor loop = loops.workers().next();

    UpstreamExchange first = client.send(post(upstream.uri("/a"), loop, false));
    await().atMost(Duration.ofSeconds(2)).until(first.head()::isDone);
    assertThat(ClientTesting.headFailure(first).failure()).isEqualTo(UpstreamException.Failure.CONNECT_FAILED);

    // The origin's protocol is still unknown: the next exchange learns it on a connection of its own.
    UpstreamExchange second = client.send(post(upstream.uri("/a"), loop, false));
    assertThat(text(second)).isEqualTo("second try");
    assertThat(UpstreamCalls.head(second).protocol()).isEqualTo("h2");
    assertThat(upstream.accepted).hasValue(2);
  }

  @Test
  void anHttp2ConnectionWithNoStreamIsClosedOnceIdleLongerThanTheIdleTimeout() {
    FakeClock ticker = FakeClock.at("2026-01-01T00:00:00Z");
    client = new NettyUpstreamHttp(loops, new ClientSettings(Duration.ofMillis(400), 8, 64 * 1024), ticker);
    upstream = FakeUpstream.h2c(FakeUpstream.ok("idle soon"));
    EventExecutor loop = loops.workers().next();
    assertThat(text(client.send(post(upstream.uri("/a"), loop, true)))).isEqualTo("idle soon");

    // The sweep runs every 100 ms of real time; idleness is counted on the ticker, which stands still.
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
        .untilAsserted(() -> assertThat(upstream.closed).hasValue(0));
    ticker.advance(Duration.ofMillis(400));

    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));
  }

  @Test
  void aConnectionTheUpstreamSentGoAwayOnGetsNoNewStreams() throws Exception {
    client = client();
    AtomicInteger seen = new AtomicInteger();
    upstream = FakeUpstream.h2c((ctx, request) -> {
      if (seen.incrementAndGet() == 1) {
        // Going away: the stream in flight may finish, nothing new may start on this connection.
        ctx.channel().parent().writeAndFlush(new DefaultHttp2GoAwayFrame(Http2Error.NO_ERROR));
      }
      ctx.writeAndFlush(FakeUpstream.full("answer " + seen.get(), false));
    });
    EventExecutor loop = loops.workers().next();

    assertThat(text(client.send(post(upstream.uri("/a"), loop, true)))).isEqualTo("answer 1");
    assertThat(text(client.send(post(upstream.uri("/a"), loop, true)))).isEqualTo("answer 2");

    assertThat(upstream.accepted).hasValue(2);
  }

  @Test
  void aStreamTheUpstreamRefusedUnprocessedIsSentOnceMore() throws Exception {
    client = client();
    AtomicInteger seen = new AtomicInteger();
    upstream = FakeUpstream.h2c((ctx, request) -> {
      if (seen.incrementAndGet() == 2) {
        ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.REFUSED_STREAM)); // "not processed"
      } else {
        ctx.writeAndFlush(FakeUpstream.full("answer " + seen.get(), false));
      }
    });
    EventExecutor loop = loops.workers().next();
    assertThat(text(client.send(post(upstream.uri("/a"), loop, true)))).isEqualTo("answer 1");

    assertThat(text(client.send(post(upstream.uri("/a"), loop, true)))).isEqualTo("answer 3");
    assertThat(upstream.requests).hasValue(3);
    assertThat(upstream.accepted).as("the retry takes another connection").hasValue(2);
  }

  @Test
  void aStreamResetAfterItWasSentIsNotSentAgain() throws Exception {
    client = client();
    upstream = FakeUpstream.h2c((ctx, request) -> ctx.writeAndFlush(new DefaultHttp2ResetFrame(Http2Error.INTERNAL_ERROR)));
    EventExecutor loop = loops.workers().next();

    UpstreamException failure = ClientTesting.headFailure(client.send(post(upstream.uri("/a"), loop, true)));

    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.RESET_BEFORE_RESPONSE);
    assertThat(upstream.requests).hasValue(1);
  }

  @Test
  void aClosedHttp2ConnectionIsReplacedForTheNextExchange() throws Exception {
    client = client();
    upstream = FakeUpstream.h2c(FakeUpstream.ok("again"));
    EventExecutor loop = loops.workers().next();
    assertThat(text(client.send(post(upstream.uri("/a"), loop, true)))).isEqualTo("again");

    upstream.connections.getFirst().close().syncUninterruptibly();

    assertThat(text(client.send(post(upstream.uri("/a"), loop, true)))).isEqualTo("again");
    assertThat(upstream.accepted).hasValue(2);
    assertThat(upstream.requests).hasValue(2);
  }

  @Test
  void manyStreamsLeaveNoBufferUnreleased() throws Exception {
    // NettyLeakCheck (PARANOID, every buffer tracked) fails the class if any of these leaked.
    client = client();
    upstream = FakeUpstream.h2c(FakeUpstream.ok("y".repeat(10_000)));
    EventExecutor loop = loops.workers().next();
    for (int round = 0; round < 30; round++) {
      List<UpstreamExchange> exchanges = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        exchanges.add(client.send(post(upstream.uri("/a"), loop, true)));
      }
      exchanges.get(round % 10).cancel();
      for (int i = 0; i < 10; i++) {
        UpstreamExchange exchange = exchanges.get(i);
        if (i == round % 10) {
          exchange.head().exceptionally(e -> null).join();
        } else {
          assertThat(text(exchange)).hasSize(10_000);
        }
      }
    }
  }
}
