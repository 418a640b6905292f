package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.spillway.config.ServerConfig;
import io.spillway.core.http.HttpService;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.testing.FakeClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One connection's requests on an {@link EmbeddedChannel}. The "virtual threads" are tasks the test
 * runs itself, so it decides when each answer is ready.
 */
class HttpRequestHandlerTest {
  private final List<String> served = new ArrayList<>();
  private final QueuedService service = new QueuedService(request -> {
    served.add(request.path());
    return GatewayResponse.json(200, ("{\"path\":\"" + request.path() + "\"}").getBytes(StandardCharsets.UTF_8));
  });

  private final HttpRequestHandler handler = new HttpRequestHandler(service,
      new ConnectionTracker(100), ServerConfig.DEFAULTS, FakeClock.at("2025-03-01T00:00:00Z"));
  private final EmbeddedChannel channel =
      new EmbeddedChannel(new RequestBodyAggregator(64, handler::answerPending), handler);

  @AfterEach
  void release() {
    channel.finishAndReleaseAll();
  }

  @Test
  void aClientThatWaitsForEachAnswerKeepsReading() {
    channel.writeInbound(request("/first"));
    assertThat(service.waiting()).isEqualTo(1);
    assertThat(channel.config().isAutoRead()).isTrue();

    answerNext();
    assertThat(bodyOf(channel.readOutbound())).contains("/first");
    channel.writeInbound(request("/second"));
    answerNext();

    assertThat(bodyOf(channel.readOutbound())).contains("/second");
    assertThat(channel.config().isAutoRead()).isTrue();
    assertThat(handler.answerPending()).isFalse();
  }

  @Test
  void pipelinedRequestsAreServedOneAtATimeAndAnsweredInOrder() {
    channel.writeInbound(request("/first"), request("/second"), request("/third"));
    assertThat(service.waiting()).as("only the first is being served").isEqualTo(1);
    assertThat(channel.config().isAutoRead()).as("reading stops while requests wait").isFalse();

    answerNext();
    assertThat(served).containsExactly("/first");
    answerNext();
    answerNext();

    assertThat(served).containsExactly("/first", "/second", "/third");
    assertThat(bodyOf(channel.readOutbound())).contains("/first");
    assertThat(bodyOf(channel.readOutbound())).contains("/second");
    assertThat(bodyOf(channel.readOutbound())).contains("/third");
    assertThat(channel.config().isAutoRead()).as("reading resumes once none wait").isTrue();
  }

  @Test
  void anOversizedPipelinedRequestIsRefusedOnlyAfterTheAnswerBeforeIt() {
    channel.writeInbound(request("/first"));
    HttpRequest oversized = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/second");
    oversized.headers().set(HttpHeaderNames.CONTENT_LENGTH, 1024);
    channel.writeInbound(oversized);
    assertThat((Object) channel.readOutbound()).as("nothing may overtake the first answer").isNull();

    answerNext();

    assertThat(bodyOf(channel.readOutbound())).contains("/first");
    FullHttpResponse refusal = channel.readOutbound();
    try {
      assertThat(refusal.status().code()).isEqualTo(413);
    } finally {
      refusal.release();
    }
    assertThat(channel.isOpen()).isFalse();
    assertThat(served).containsExactly("/first");
  }

  /** Runs the oldest request's thread to completion, then the event loop's follow-up tasks. */
  private void answerNext() {
    service.answerNext();
    channel.runPendingTasks();
  }

  private static FullHttpRequest request(String path) {
    byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
    FullHttpRequest request =
        new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path, Unpooled.wrappedBuffer(body));
    request.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length);
    return request;
  }

  private static String bodyOf(FullHttpResponse response) {
    try {
      assertThat(response.status().code()).isEqualTo(200);
      return response.content().toString(StandardCharsets.UTF_8);
    } finally {
      response.release();
    }
  }
}
