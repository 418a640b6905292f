package io.spillway.server.client;

import static io.spillway.server.client.ClientTesting.headFailure;
import static io.spillway.server.client.ClientTesting.post;
import static io.spillway.server.client.ClientTesting.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.util.concurrent.EventExecutor;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.testing.FakeClock;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.server.EventLoops;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * HTTP/1.1 connections to an upstream are kept alive and reused, one exchange at a time, per event
 * loop and origin; the pool keeps no more idle ones than it is told, for no longer than its idle
 * timeout (counted on the injected ticker), and never reuses one the upstream said it would close.
 * A connection found dead in the pool costs no failure; a connection lost after the request went
 * out is a failure, never a second copy of the request.
 */
@Timeout(60)
class Http1PoolingTest {
  /** Counted on the fake ticker, which moves only when told; short only so the sweep runs often. */
  static final Duration IDLE = Duration.ofMillis(400);

  final FakeClock ticker = FakeClock.at("2026-01-01T00:00:00Z");
  final EventLoops loops = new EventLoops(1);
  final NettyUpstreamHttp client =
      new NettyUpstreamHttp(loops, new ClientSettings(IDLE, 2, 64 * 1024), ticker);
  FakeUpstream upstream;

  @AfterEach
  void stop() {
    upstream.close();
    loops.close();
  }

  @Test
  void aSecondRequestReusesTheKeptAliveConnection() {
    upstream = FakeUpstream.http1(FakeUpstream.ok("hello"));

    assertThat(text(client.send(post(upstream.uri("/v1/chat/completions"))))).isEqualTo("hello");
    assertThat(text(client.send(post(upstream.uri("/v1/chat/completions"))))).isEqualTo("hello");

    assertThat(upstream.requests).hasValue(2);
    assertThat(upstream.accepted).hasValue(1);
  }

  @Test
  void anAnswerSayingConnectionCloseIsNotReused() {
    // The upstream says it will close but leaves the socket open: only the client's rule stops reuse.
    upstream = FakeUpstream.http1((ctx, request) -> {
      var answer = FakeUpstream.full("bye", false);
      answer.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
      ctx.writeAndFlush(answer);
    });

    assertThat(text(client.send(post(upstream.uri("/a"))))).isEqualTo("bye");
    assertThat(text(client.send(post(upstream.uri("/a"))))).isEqualTo("bye");

    assertThat(upstream.accepted).hasValue(2);
    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(2));
  }

  @Test
  void anIdleConnectionIsClosedOnceIdleLongerThanTheIdleTimeout() {
    upstream = FakeUpstream.http1(FakeUpstream.ok("hi"));
    text(client.send(post(upstream.uri("/a"))));

    ticker.advance(IDLE.minusMillis(10));
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2))
        .untilAsserted(() -> assertThat(upstream.closed).hasValue(0));

    ticker.advance(Duration.ofMillis(20));
    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));

    text(client.send(post(upstream.uri("/a"))));
    assertThat(upstream.accepted).hasValue(2);
  }

  @Test
  void noMoreIdleConnectionsAreKeptPerOriginThanMaxIdlePerOrigin() {
    HeldAnswers held = new HeldAnswers();
    upstream = FakeUpstream.http1(held);
    List<UpstreamExchange> four = IntStream.range(0, 4).mapToObj(i -> client.send(post(upstream.uri("/a")))).toList();
    held.awaitRequests(4);
    held.release("ok");
    four.forEach(exchange -> assertThat(text(exchange)).isEqualTo("ok"));

    // Four connections were needed at once; two (maxIdlePerOrigin) stay, the others are closed.
    assertThat(upstream.accepted).hasValue(4);
    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(2));

    List<UpstreamExchange> two = List.of(client.send(post(upstream.uri("/a"))), client.send(post(upstream.uri("/a"))));
    held.awaitRequests(2);
    held.release("again");
    two.forEach(exchange -> assertThat(text(exchange)).isEqualTo("again"));
    assertThat(upstream.accepted).hasValue(4);
  }

  @Test
  void aPooledConnectionTheUpstreamClosedWhileIdleIsReplacedBeforeTheRequestGoesOut() {
    upstream = FakeUpstream.http1(FakeUpstream.ok("fresh"));
    EventExecutor loop = loops.workers().next();
    text(client.send(post(upstream.uri("/a"), loop, false)));

    // The loop is busy while the upstream closes the idle connection: when the request arrives the
    // pool still holds the connection as open. A connection idle that long is first given a pass
    // of the loop's reading, which finds the close: the request goes out once, on a fresh one.
    CountDownLatch busy = new CountDownLatch(1);
    loop.execute(() -> awaitQuietly(busy));
    upstream.connections.getFirst().close().syncUninterruptibly();
    ticker.advance(IDLE.dividedBy(2));
    UpstreamExchange exchange = client.send(post(upstream.uri("/a"), loop, false));
    busy.countDown();

    assertThat(text(exchange)).isEqualTo("fresh");
    assertThat(upstream.accepted).hasValue(2);
    assertThat(upstream.requests).hasValue(2);
  }

  @Test
  void aConnectionLostAfterTheRequestWentOutFailsAndIsNeverSentTwice() {
    AtomicInteger seen = new AtomicInteger();
    upstream = FakeUpstream.http1((ctx, request) -> {
      if (seen.incrementAndGet() == 1) {
        ctx.writeAndFlush(FakeUpstream.full("first", false));
      } else {
        ctx.close(); // the request may be running here: the client must not send it again
      }
    });
    text(client.send(post(upstream.uri("/a"))));

    UpstreamException failure = headFailure(client.send(post(upstream.uri("/a"))));

    assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.RESET_BEFORE_RESPONSE);
    assertThat(upstream.requests).hasValue(2);
    assertThat(upstream.accepted).hasValue(1);
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void manyExchangesLeaveNoBufferUnreleased() {
    // NettyLeakCheck (PARANOID, every buffer tracked) fails the class if any of these leaked.
    upstream = FakeUpstream.http1(FakeUpstream.ok("x".repeat(10_000)));
    for (int i = 0; i < 300; i++) {
      UpstreamExchange exchange = client.send(post(upstream.uri("/a")));
      if (i % 3 == 0) {
        exchange.cancel();
        exchange.head().exceptionally(e -> null).join();
      } else {
        assertThat(text(exchange)).hasSize(10_000);
      }
    }
  }
}
