package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.spillway.config.ServerConfig;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.testing.FakeClock;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** A plain connection is HTTP/2 exactly when it opens with the whole connection preface. */
class PriorKnowledgeDetectorTest {
  private static final String PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

  private final FrontEndProtocols protocols = new FrontEndProtocols(ServerConfig.DEFAULTS,
      new ConnectionTracker(10), request -> GatewayResponse.json(200, new byte[0]),
      FakeClock.at("2026-01-01T00:00:00Z"));
  private final EmbeddedChannel channel = new EmbeddedChannel();

  PriorKnowledgeDetectorTest() {
    channel.pipeline().addLast(FrontEndProtocols.READ_TIMEOUT, new RequestReadTimeoutHandler(
        ServerConfig.DEFAULTS.requestReadTimeout()));
    channel.pipeline().addLast("protocol", new PriorKnowledgeDetector(protocols));
  }

  @AfterEach
  void release() {
    channel.finishAndReleaseAll();
  }

  private static ByteBuf ascii(String text) {
    return Unpooled.copiedBuffer(text, StandardCharsets.US_ASCII);
  }

  @Test
  void thePrefaceInPiecesChoosesHttp2AndStopsTheHttp1ReadTimeout() {
    channel.writeInbound(ascii("PRI * HT"));
    assertThat(channel.pipeline().get("protocol")).as("still undecided").isNotNull();

    channel.writeInbound(ascii(PREFACE.substring(8)));

    assertThat(channel.pipeline().get("protocol")).isNull();
    assertThat(channel.pipeline().get("http2-codec")).isNotNull();
    assertThat(channel.pipeline().get("http-codec")).isNull();
    assertThat(channel.pipeline().get(FrontEndProtocols.READ_TIMEOUT)).isNull();
  }

  @Test
  void anHttp1RequestChoosesHttp1AtItsFirstByte() {
    channel.writeInbound(ascii("P"));
    assertThat(channel.pipeline().get("protocol")).isNotNull();

    channel.writeInbound(ascii("OST /v1/chat/completions HTTP/1.1\r\n"));

    assertThat(channel.pipeline().get("protocol")).isNull();
    assertThat(channel.pipeline().get("http-codec")).isNotNull();
    assertThat(channel.pipeline().get("http2-codec")).isNull();
    assertThat(channel.pipeline().get(FrontEndProtocols.READ_TIMEOUT)).isNotNull();
  }

  @Test
  void aMethodNamedPriOverHttp1IsHttp1() {
    channel.writeInbound(ascii("PRI * HTTP/1.1\r\nHost: x\r\n\r\n"));

    assertThat(channel.pipeline().get("http-codec")).isNotNull();
    assertThat(channel.pipeline().get("http2-codec")).isNull();
  }
}
