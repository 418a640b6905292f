package io.spillway.core.server;

import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import io.spillway.core.config.ServerConfig;
import java.time.Clock;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** Builds each connection's pipeline from small named steps: TCP, TLS, HTTP/1.1, the request handler. */
final class GatewayChannelInitializer extends ChannelInitializer<SocketChannel> {
  private final ServerConfig config;
  private final SslContext ssl;
  private final ConnectionTracker connections;
  private final ChannelGroup channels;
  private final HttpService service;
  private final Executor requestThreads;
  private final Clock clock;
  private final ConnectionLimitHandler connectionLimit;

  GatewayChannelInitializer(
      ServerConfig config,
      SslContext ssl,
      ConnectionTracker connections,
      ChannelGroup channels,
      HttpService service,
      Executor requestThreads,
      Clock clock) {
    this.config = config;
    this.ssl = ssl;
    this.connections = connections;
    this.channels = channels;
    this.service = service;
    this.requestThreads = requestThreads;
    this.clock = clock;
    this.connectionLimit = new ConnectionLimitHandler(connections, channels);
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    ChannelPipeline pipeline = ch.pipeline();
    addTlsHandlers(ch, pipeline);
    addConnectionHandlers(pipeline);
    HttpRequestHandler requests = new HttpRequestHandler(service, requestThreads, connections, config, clock);
    addHttp1Handlers(pipeline, requests);
    pipeline.addLast("request", requests);
  }

  /** After TLS, so that even a refusal reaches a TLS client encrypted. */
  private void addConnectionHandlers(ChannelPipeline pipeline) {
    pipeline.addLast("connection-limit", connectionLimit);
    pipeline.addLast("request-read-timeout", new RequestReadTimeoutHandler(config.requestReadTimeout()));
  }

  private void addTlsHandlers(SocketChannel ch, ChannelPipeline pipeline) {
    if (ssl != null) {
      pipeline.addLast("tls", ssl.newHandler(ch.alloc()));
    }
  }

  private void addHttp1Handlers(ChannelPipeline pipeline, HttpRequestHandler requests) {
    pipeline.addLast(
        "http-codec",
        new HttpServerCodec(
            new HttpDecoderConfig()
                .setMaxInitialLineLength(8192)
                .setMaxHeaderSize(config.maxHeaderSize().toIntBytes())
                .setMaxChunkSize(64 * 1024)));
    pipeline.addLast(
        "idle", new IdleStateHandler(0, 0, config.idleTimeout().toMillis(), TimeUnit.MILLISECONDS));
    pipeline.addLast("aggregator",
        new RequestBodyAggregator(config.maxRequestSize().toIntBytes(), requests::answerPending));
  }
}
