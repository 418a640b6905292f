package io.spillway.server.client;

import static io.spillway.server.client.ClientTesting.post;
import static io.spillway.server.client.ClientTesting.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http2.Http2Error;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.util.concurrent.EventExecutor;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.testing.FakeClock;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.server.EventLoops;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An HTTP/2 upstream that sends GOAWAY promises it did not process the streams above the frame's
 * last stream id: those are sent once more, on a new connection. Streams at or below it may have
 * run upstream (and been billed), so they are never sent again: they finish on the old connection,
 * or fail as upstream errors if it closes first. Nothing new starts on a connection that is going
 * away.
 */
@Timeout(60)
class Http2GoAwayTest {
  final EventLoops loops = new EventLoops(1);
  final EventExecutor loop = loops.workers().next();
  /** The streams the upstream holds unanswered, on its first connection, in the order they came. */
  final List<ChannelHandlerContext> held = new CopyOnWriteArrayList<>();
  NettyUpstreamHttp client;
  FakeUpstream upstream;

  @BeforeEach
  void start() {
    client = new NettyUpstreamHttp(loops, new ClientSettings(Duration.ofSeconds(30), 8, 64 * 1024),
        FakeClock.at("2026-01-01T00:00:00Z"));
    // The first connection holds its streams for the test to settle; any later one answers at once.
    upstream = FakeUpstream.h2c(this::respond);
  }

  @AfterEach
  void stop() {
    upstream.close();
    loops.close();
  }

  private void respond(ChannelHandlerContext ctx, FullHttpRequest request) {
    if (ctx.channel().parent() == upstream.connections.getFirst()) {
      held.add(ctx);
    } else {
      ctx.writeAndFlush(FakeUpstream.full("from connection " + upstream.connections.indexOf(ctx.channel().parent()),
          false));
    }
  }

  private UpstreamExchange send() {
    return client.send(post(upstream.uri("/v1/chat/completions"), loop, true));
  }

  private static int streamId(ChannelHandlerContext stream) {
    return ((Http2StreamChannel) stream.channel()).stream().id();
  }

  /** Sends GOAWAY on the first connection saying streams up to {@code lastStreamId} were (or will be) processed. */
  private void goAway(int lastStreamId) {
    Channel connection = upstream.connections.getFirst();
    connection.eventLoop().submit(() -> {
      ChannelHandlerContext codec = connection.pipeline().context(Http2FrameCodec.class);
      ((Http2FrameCodec) codec.handler()).goAway(codec, lastStreamId, Http2Error.NO_ERROR.code(),
          Unpooled.EMPTY_BUFFER, codec.newPromise());
      codec.flush();
    }).syncUninterruptibly();
  }

  /** Answers a held stream; run on its loop, so it is written after anything sent before it. */
  private static void answer(ChannelHandlerContext stream, String text) {
    stream.executor().submit(() -> stream.writeAndFlush(FakeUpstream.full(text, false))).syncUninterruptibly();
  }

  @Test
  void streamsAboveGoAwaysLastStreamAreSentAgainOnANewConnection() {
    List<UpstreamExchange> exchanges = List.of(send(), send(), send());
    await().until(() -> held.size() == 3);
    assertThat(upstream.accepted).as("one connection carries all three").hasValue(1);

    goAway(streamId(held.getFirst()));
    answer(held.getFirst(), "processed before going away");

    assertThat(text(exchanges.get(0))).isEqualTo("processed before going away");
    assertThat(text(exchanges.get(1))).isEqualTo("from connection 1");
    assertThat(text(exchanges.get(2))).isEqualTo("from connection 1");
    assertThat(upstream.accepted).as("the two unprocessed streams share one new connection").hasValue(2);
    assertThat(upstream.requests).as("each unprocessed stream is sent once more, and only once").hasValue(5);
  }

  @Test
  void streamsTheUpstreamProcessedAreNotSentAgain() {
    List<UpstreamExchange> exchanges = List.of(send(), send());
    await().until(() -> held.size() == 2);

    // Both streams are at or below the last stream id: the upstream may have run them; then it is gone.
    goAway(streamId(held.getLast()));
    upstream.connections.getFirst().close().syncUninterruptibly();

    for (UpstreamExchange exchange : exchanges) {
      UpstreamException failure = ClientTesting.headFailure(exchange);
      assertThat(failure.failure()).isEqualTo(UpstreamException.Failure.RESET_BEFORE_RESPONSE);
      assertThat(failure.backend()).isEqualTo("cloud");
    }
    assertThat(upstream.requests).as("neither was sent again").hasValue(2);
    assertThat(upstream.accepted).hasValue(1);
  }

  @Test
  void newExchangesAfterGoAwayOpenANewConnection() {
    UpstreamExchange first = send();
    UpstreamExchange inFlight = send();
    await().until(() -> held.size() == 2);
    goAway(streamId(held.getLast()));
    // Written after the GOAWAY on the same connection: once the client has this answer, it has read that.
    answer(held.getFirst(), "first");
    assertThat(text(first)).isEqualTo("first");

    UpstreamExchange next = send();

    assertThat(text(next)).isEqualTo("from connection 1");
    assertThat(upstream.accepted).hasValue(2);
    answer(held.getLast(), "finished on the old connection");
    assertThat(text(inFlight)).as("a stream at or below the last stream id still finishes")
        .isEqualTo("finished on the old connection");
    assertThat(upstream.requests).hasValue(3);
  }
}
