package io.spillway.server.client;

import static io.spillway.server.client.ClientTesting.stream;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.util.concurrent.EventExecutor;
import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamCalls;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.server.EventLoops;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A body is read from the upstream only as fast as its reader takes it: a reader that stops
 * polling stops the reading past the body's high-water mark (the upstream's writes then wait on
 * TCP, or on the HTTP/2 stream's window), and polling again lets the rest through. Over HTTP/2 one
 * stalled stream holds back only itself.
 */
@Timeout(60)
class BodyBackpressureTest {
  static final long BODY = 8L << 20;
  /** Far below the body: the high-water mark plus what the kernel's buffers or one stream window hold. */
  static final long STALLED_BOUND = 4L << 20;

  final EventLoops loops = new EventLoops(1);
  final NettyUpstreamHttp client = new NettyUpstreamHttp(loops,
      new ClientSettings(Duration.ofSeconds(30), 8, 64 * 1024), Ticker.system());
  final AtomicLong sentA = new AtomicLong();
  final AtomicLong sentB = new AtomicLong();
  FakeUpstream upstream;

  @AfterEach
  void stop() {
    upstream.close();
    loops.close();
  }

  @Test
  void anHttp1BodyNobodyReadsStopsTheUpstreamUntilItIsPolled() {
    upstream = FakeUpstream.http1(FakeUpstream.stream(BODY, 16 * 1024, sentA), 64 * 1024);
    UpstreamExchange exchange = client.send(stream(upstream.uri("/a"), false));
    assertThat(UpstreamCalls.head(exchange).status()).isEqualTo(200);

    await().until(() -> sentA.get() > 0);
    await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(3)).until(() -> sentA.get() < STALLED_BOUND);

    assertThat(UpstreamCalls.readAll(exchange.body(), Long.MAX_VALUE)).hasSize((int) BODY);
    assertThat(sentA).hasValue(BODY);
  }

  @Test
  void anHttp2StreamNobodyReadsStopsOnlyItselfUntilItIsPolled() {
    upstream = FakeUpstream.h2c((ctx, request) -> FakeUpstream.stream(BODY, 16 * 1024,
        request.uri().equals("/a") ? sentA : sentB).respond(ctx, request));
    EventExecutor loop = loops.workers().next();
    UpstreamExchange stalled = client.send(on(loop, stream(upstream.uri("/a"), true)));
    assertThat(UpstreamCalls.head(stalled).protocol()).isEqualTo("h2");
    await().until(() -> sentA.get() > 0);

    UpstreamExchange flowing = client.send(on(loop, stream(upstream.uri("/b"), true)));
    assertThat(UpstreamCalls.readAll(flowing.body(), Long.MAX_VALUE)).hasSize((int) BODY);
    assertThat(sentB).hasValue(BODY);
    assertThat(upstream.accepted).hasValue(1);
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(3)).until(() -> sentA.get() < STALLED_BOUND);

    assertThat(UpstreamCalls.readAll(stalled.body(), Long.MAX_VALUE)).hasSize((int) BODY);
    assertThat(sentA).hasValue(BODY);
  }

  private static OutboundRequest on(EventExecutor loop, OutboundRequest r) {
    return new OutboundRequest(r.backend(), r.method(), r.uri(), r.headers(), r.body(), r.connectTimeout(),
        r.headTimeout(), r.wholeTimeout(), loop, r.h2c());
  }
}
