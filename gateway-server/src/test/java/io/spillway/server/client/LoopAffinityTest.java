package io.spillway.server.client;

import static io.spillway.server.client.ClientTesting.post;
import static io.spillway.server.client.ClientTesting.text;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.util.concurrent.EventExecutor;
import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.server.EventLoops;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An exchange sent with a worker loop of the shared event loops as its affinity runs on that loop:
 * the upstream connection lives where the client connection does, and the answer's head arrives on
 * that loop's thread, whatever thread sent the request.
 */
@Timeout(60)
class LoopAffinityTest {
  final EventLoops loops = new EventLoops(2);
  final NettyUpstreamHttp client = new NettyUpstreamHttp(loops, ClientSettings.DEFAULTS, Ticker.system());
  final HeldAnswers held = new HeldAnswers();
  final FakeUpstream upstream = FakeUpstream.http1(held);

  @AfterEach
  void stop() {
    upstream.close();
    loops.close();
  }

  @Test
  void theHeadArrivesOnTheLoopTheExchangeWasSentFor() {
    for (EventExecutor loop : loops.workers()) {
      UpstreamExchange exchange = client.send(post(upstream.uri("/a"), loop, false));
      held.awaitRequests(1);
      // Registered before the answer is let go, so the callback runs where the head completes.
      CompletableFuture<Thread> headThread = exchange.head().thenApply(head -> Thread.currentThread());
      held.release("here");

      assertThat(loop.inEventLoop(headThread.join())).isTrue();
      assertThat(text(exchange)).isEqualTo("here");
    }
    // Two loops, two pools: a connection each.
    assertThat(upstream.accepted).hasValue(2);
  }
}
