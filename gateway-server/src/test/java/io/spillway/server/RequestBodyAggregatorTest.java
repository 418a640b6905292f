package io.spillway.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RequestBodyAggregatorTest {
  @Test
  void oversizedBodyIsAnsweredWithAnOpenAiStyle413AndTheConnectionCloses() {
    EmbeddedChannel channel = new EmbeddedChannel(new RequestBodyAggregator(16));
    HttpRequest request = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v1/completions");
    request.headers().set(HttpHeaderNames.CONTENT_LENGTH, 64);

    channel.writeInbound(request);

    FullHttpResponse response = channel.readOutbound();
    try {
      assertThat(response.status().code()).isEqualTo(413);
      assertThat(response.content().toString(StandardCharsets.UTF_8)).contains("\"code\":\"request_too_large\"");
      assertThat(channel.isOpen()).isFalse();
    } finally {
      response.release();
      channel.finishAndReleaseAll();
    }
  }
}
