package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpVersion;
import io.spillway.config.ServerConfig;
import io.spillway.core.http.HttpService;
import io.spillway.core.http.ServerRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.testing.FakeClock;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The connection closing signals the {@link io.spillway.core.pipeline.ClientDisconnect} of the
 * request being served, and of no request already answered. The request threads are tasks the test
 * runs itself.
 */
class ClientDisconnectSignalTest {
  private final List<ServerRequest> received = new ArrayList<>();
  private final List<Boolean> signalledWhileServing = new ArrayList<>();
  private EmbeddedChannel channel;
  /** Whether the client leaves while its request is being served. */
  private boolean clientLeaves;
  private final QueuedService service = new QueuedService(request -> {
    received.add(request);
    if (clientLeaves) {
      channel.close();
    }
    signalledWhileServing.add(request.disconnect().happened());
    return GatewayResponse.json(200, "{}".getBytes(StandardCharsets.UTF_8));
  });


  @BeforeEach
  void open() {
    channel = new EmbeddedChannel(new HttpRequestHandler(service,
        new ConnectionTracker(100), ServerConfig.DEFAULTS, FakeClock.at("2025-03-01T00:00:00Z")));
  }

  @AfterEach
  void release() {
    channel.finishAndReleaseAll();
  }

  @Test
  void closingTheConnectionSignalsTheRequestBeingServed() {
    clientLeaves = true;
    channel.writeInbound(request("/v1/chat/completions"));

    service.answerNext();

    assertThat(signalledWhileServing).containsExactly(true);
  }

  @Test
  void aRequestAlreadyAnsweredIsNotSignalledWhenTheConnectionClosesLater() {
    channel.writeInbound(request("/v1/chat/completions"));
    service.answerNext();
    channel.runPendingTasks();
    FullHttpResponse answer = channel.readOutbound();
    answer.release();

    channel.close();

    assertThat(signalledWhileServing).containsExactly(false);
    assertThat(received.get(0).disconnect().happened()).isFalse();
  }

  private static FullHttpRequest request(String path) {
    byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
    FullHttpRequest request =
        new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, path, Unpooled.wrappedBuffer(body));
    request.headers().set(HttpHeaderNames.CONTENT_LENGTH, body.length);
    return request;
  }
}
