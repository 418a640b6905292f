package io.spillway.server.client;

import static io.spillway.server.client.ClientTesting.headFailure;
import static io.spillway.server.client.ClientTesting.post;
import static io.spillway.server.client.ClientTesting.stream;
import static io.spillway.server.client.ClientTesting.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import io.netty.util.concurrent.EventExecutor;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.server.EventLoops;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Cancelling an exchange, at any point, stops the work upstream: before it connected nothing is
 * sent; later its HTTP/1.1 connection is closed, or its HTTP/2 stream reset while the connection
 * carries on with the other streams. The head or the body then fails.
 */
@Timeout(60)
class ClientCancellationTest {
  final EventLoops loops = new EventLoops(1);
  final NettyUpstreamHttp client = new NettyUpstreamHttp(loops, ClientSettings.DEFAULTS, Ticker.system());
  FakeUpstream upstream;

  @AfterEach
  void stop() {
    upstream.close();
    loops.close();
  }

  @Test
  void cancelledBeforeItConnectedNothingReachesTheUpstream() throws InterruptedException {
    upstream = FakeUpstream.http1(FakeUpstream.ok("never"));
    EventExecutor loop = loops.workers().next();
    CountDownLatch hold = new CountDownLatch(1);
    loop.execute(() -> awaitQuietly(hold)); // the loop is busy: the exchange cannot start yet

    UpstreamExchange exchange = client.send(post(upstream.uri("/a"), loop, false));
    exchange.cancel();
    hold.countDown();

    assertThat(headFailure(exchange).getMessage()).contains("cancelled");
    await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2))
        .untilAsserted(() -> assertThat(upstream.accepted).hasValue(0));
  }

  @Test
  void cancelledWhileWaitingForTheHeadTheUpstreamSeesItsConnectionClosed() {
    HeldAnswers held = new HeldAnswers();
    upstream = FakeUpstream.http1(held);
    UpstreamExchange exchange = client.send(post(upstream.uri("/a")));
    held.awaitRequests(1);

    exchange.cancel();

    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));
    assertThat(headFailure(exchange).getMessage()).contains("cancelled");
  }

  @Test
  void cancelledMidBodyTheUpstreamSeesItsConnectionClosedAndTheBodyFails() {
    upstream = FakeUpstream.http1(FakeUpstream.headOnly());
    UpstreamExchange exchange = client.send(ClientTesting.stream(upstream.uri("/a"), false));
    assertThat(UpstreamCalls.head(exchange).status()).isEqualTo(200);

    exchange.cancel();

    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));
    UpstreamException failure = catchThrowableOfType(UpstreamException.class,
        () -> UpstreamCalls.readAll(exchange.body(), Long.MAX_VALUE));
    assertThat(failure.getMessage()).contains("cancelled");
  }

  @Test
  void aCancelledHttp2StreamIsResetAndTheConnectionServesTheOthers() {
    HeldAnswers held = new HeldAnswers();
    upstream = FakeUpstream.h2c((ctx, request) -> {
      if (request.uri().equals("/streaming")) {
        FakeUpstream.headOnly().respond(ctx, request);
      } else {
        held.respond(ctx, request);
      }
    });
    EventExecutor loop = loops.workers().next();
    UpstreamExchange cancelled = client.send(ClientTesting.withAffinity(stream(upstream.uri("/streaming"), true), loop));
    UpstreamExchange other = client.send(post(upstream.uri("/waiting"), loop, true));
    assertThat(UpstreamCalls.head(cancelled).protocol()).isEqualTo("h2");
    held.awaitRequests(1);

    cancelled.cancel();

    await().untilAsserted(() -> assertThat(upstream.streamsReset).hasValue(1));
    assertThat(catchThrowableOfType(UpstreamException.class,
        () -> UpstreamCalls.readAll(cancelled.body(), Long.MAX_VALUE))).isNotNull();
    held.release("still here");
    assertThat(text(other)).isEqualTo("still here");
    assertThat(upstream.accepted).hasValue(1);
    assertThat(upstream.closed).hasValue(0);
  }

  @Test
  void closingAnUnfinishedBodyCancelsTheExchange() {
    upstream = FakeUpstream.http1(FakeUpstream.headOnly());
    UpstreamExchange exchange = client.send(ClientTesting.stream(upstream.uri("/a"), false));
    UpstreamCalls.head(exchange);

    exchange.body().close();

    await().untilAsserted(() -> assertThat(upstream.closed).hasValue(1));
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
