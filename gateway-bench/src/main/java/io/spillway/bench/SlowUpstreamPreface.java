package io.spillway.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Picks {@link SlowUpstream}'s protocol for one connection by its first bytes: the HTTP/2 connection
 * preface {@code PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n} (RFC 9113 3.4) means h2c with prior knowledge,
 * anything else HTTP/1.1. Either way each request ends up, as a whole HTTP message, at one
 * {@link SlowStreamResponder}: on HTTP/2 one per stream, on HTTP/1.1 one per connection.
 */
final class SlowUpstreamPreface extends ByteToMessageDecoder {
  private static final byte[] PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int MAX_REQUEST_BYTES = 1024 * 1024;

  private final SlowStreamShape shape;
  private final long maxConcurrentStreams;

  SlowUpstreamPreface(SlowStreamShape shape, long maxConcurrentStreams) {
    this.shape = shape;
    this.maxConcurrentStreams = maxConcurrentStreams;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    int seen = Math.min(in.readableBytes(), PREFACE.length);
    for (int i = 0; i < seen; i++) {
      if (in.getByte(in.readerIndex() + i) != PREFACE[i]) {
        http1(ctx.pipeline());
        ctx.pipeline().remove(this);
        return;
      }
    }
    if (seen == PREFACE.length) {
      http2(ctx.pipeline());
      ctx.pipeline().remove(this);
    }
  }

  private void http1(ChannelPipeline pipeline) {
    pipeline.addLast("http-codec", new HttpServerCodec());
    pipeline.addLast("aggregator", new HttpObjectAggregator(MAX_REQUEST_BYTES));
    pipeline.addLast("stream", new SlowStreamResponder(shape));
  }

  private void http2(ChannelPipeline pipeline) {
    pipeline.addLast("http2-codec", Http2FrameCodecBuilder.forServer()
        .initialSettings(Http2Settings.defaultSettings().maxConcurrentStreams(maxConcurrentStreams))
        .build());
    pipeline.addLast("http2-streams", new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
      @Override
      protected void initChannel(Http2StreamChannel stream) {
        stream.pipeline().addLast("http2-to-http", new Http2StreamFrameToHttpObjectCodec(true));
        stream.pipeline().addLast("aggregator", new HttpObjectAggregator(MAX_REQUEST_BYTES));
        stream.pipeline().addLast("stream", new SlowStreamResponder(shape));
      }
    }));
  }
}
