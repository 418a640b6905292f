package io.spillway.server;

import io.spillway.core.http.HttpService;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http2.Http2FrameCodec;
import io.netty.handler.codec.http2.Http2FrameCodecBuilder;
import io.netty.handler.codec.http2.Http2MultiplexHandler;
import io.netty.handler.codec.http2.Http2Settings;
import io.netty.handler.codec.http2.Http2StreamChannel;
import io.netty.handler.codec.http2.Http2StreamFrameToHttpObjectCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.Ticker;
import io.spillway.config.ServerConfig;
import java.time.Clock;
import java.util.concurrent.TimeUnit;

/**
 * The two ways a connection is served once its protocol is known. HTTP/1.1: the HTTP codec, the
 * body limit and one request handler for the connection. HTTP/2: the frame codec and a child
 * channel per stream, whose pipeline turns frames back into HTTP messages so each stream is served
 * by the same body limit, request handler and response writer as an HTTP/1.1 request, streams and
 * their backpressure (the stream's flow-control window) included.
 */
final class FrontEndProtocols {
  static final String READ_TIMEOUT = "request-read-timeout";

  private final ServerConfig config;
  private final ConnectionTracker connections;
  private final HttpService service;
  private final Clock clock;
  /** Unfinished request bodies across every connection ({@code server.maxPendingBodyBytes}). */
  private final PendingBodyBudget pendingBodies;

  FrontEndProtocols(
      ServerConfig config, ConnectionTracker connections, HttpService service, Clock clock) {
    this.config = config;
    this.connections = connections;
    this.service = service;
    this.clock = clock;
    this.pendingBodies = new PendingBodyBudget(config.maxPendingBodyBytes().bytes(), "server.maxPendingBodyBytes");
  }

  long pendingBodyBytes() {
    return pendingBodies.held();
  }

  /** HTTP/1.1 after the connection's idle handler: idle events reach the request handler. */
  void http1(ChannelPipeline pipeline) {
    HttpRequestHandler requests = newRequestHandler(null);
    pipeline.addLast(
        "http-codec",
        new HttpServerCodec(
            new HttpDecoderConfig()
                .setMaxInitialLineLength(8192)
                .setMaxHeaderSize(config.maxHeaderSize().toIntBytes())
                .setMaxChunkSize(64 * 1024)));
    pipeline.addLast("pending-body-limit", new PendingBodyLimit(pendingBodies, null, requests::answerPending));
    pipeline.addLast("aggregator",
        new RequestBodyAggregator(config.maxRequestSize().toIntBytes(), requests::answerPending));
    pipeline.addLast("request", requests);
  }

  /**
   * The connection-wide read timeout and idle handler are HTTP/1's: on HTTP/2 the streams share the
   * connection, so a stream that sends nothing for {@code server.idleTimeout} is reset instead, and
   * a connection with no open stream and no stream frame for as long is closed ({@link
   * Http2IdleClose}: PINGs do not keep it open). Per connection: one budget of stream resets either
   * way ({@link Http2ResetBudget}), one of unfinished bodies ({@link PendingBodyLimit}), one share of
   * requests in flight ({@link InFlightShare}).
   */
  void http2(ChannelPipeline pipeline) {
    if (pipeline.get(READ_TIMEOUT) != null) {
      pipeline.remove(READ_TIMEOUT);
    }
    if (pipeline.get("idle") != null) {
      pipeline.remove("idle");
    }
    ServerConfig.Http2Config limits = config.http2();
    Ticker ticker = Ticker.systemTicker();
    Http2ResetBudget resets = new Http2ResetBudget(limits.maxResetsPerWindow(), limits.resetWindow(), ticker);
    Http2IdleClose idle = new Http2IdleClose(config.idleTimeout(), ticker);
    Http2FrameCodec codec = Http2FrameCodecBuilder.forServer()
        .initialSettings(Http2Settings.defaultSettings()
            .maxConcurrentStreams(limits.maxConcurrentStreams())
            .initialWindowSize(limits.initialWindowSize().toIntBytes())
            .maxHeaderListSize(config.maxHeaderSize().bytes()))
        // Resets are counted both ways by Http2ResetBudget; Netty's client-only count would be a
        // second, looser limit on the same thing. Its outbound guard stays, on the same budget, for
        // the resets of streams that were never opened (which no stream close reports).
        .decoderEnforceMaxRstFramesPerWindow(0, 0)
        .encoderEnforceMaxRstFramesPerWindow(limits.maxResetsPerWindow(), (int) limits.resetWindow().toSeconds())
        .build();
    idle.watch(codec.connection());
    Http2FrameWatch watch = new Http2FrameWatch(resets, idle, "http2-codec");
    watch.watch(codec.connection(), pipeline);
    PendingBodyBudget connectionBodies = new PendingBodyBudget(
        limits.maxPendingBodyBytesPerConnection().bytes(), "server.http2.maxPendingBodyBytesPerConnection");
    InFlightShare share = new InFlightShare(limits.maxInFlightPerConnection());
    pipeline.addLast("http2-idle-close", idle);
    pipeline.addLast("http2-codec", codec);
    pipeline.addLast("http2-watch", watch);
    pipeline.addLast("http2-streams", new Http2MultiplexHandler(new ChannelInitializer<Http2StreamChannel>() {
      @Override
      protected void initChannel(Http2StreamChannel stream) {
        http2Stream(stream.pipeline(), connectionBodies, share);
      }
    }));
    pipeline.addLast("http2-errors", Http2ConnectionErrors.INSTANCE);
  }

  private void http2Stream(ChannelPipeline pipeline, PendingBodyBudget connectionBodies, InFlightShare share) {
    HttpRequestHandler requests = newRequestHandler(share);
    pipeline.addLast("http2-to-http", new Http2StreamFrameToHttpObjectCodec(true));
    pipeline.addLast("idle", idleHandler());
    pipeline.addLast("pending-body-limit", new PendingBodyLimit(pendingBodies, connectionBodies, () -> false));
    pipeline.addLast("aggregator",
        new RequestBodyAggregator(config.maxRequestSize().toIntBytes(), requests::answerPending));
    pipeline.addLast("request", requests);
  }

  private HttpRequestHandler newRequestHandler(InFlightShare share) {
    return new HttpRequestHandler(service, connections, config, clock, share);
  }

  /**
   * {@code server.idleTimeout} for one connection (from its start, so a client that never sends a
   * byte is closed too) or one HTTP/2 stream.
   */
  IdleStateHandler idleHandler() {
    return new IdleStateHandler(0, 0, config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS);
  }
}
