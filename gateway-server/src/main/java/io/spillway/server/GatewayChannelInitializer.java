package io.spillway.server;

import io.spillway.core.http.HttpService;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.ssl.SslContext;
import io.spillway.config.ServerConfig;
import java.time.Clock;

/**
 * Builds each connection's pipeline from small named steps: TCP, TLS, the connection limit, then
 * the protocol (HTTP/1.1, or HTTP/2 chosen by ALPN over TLS or by its preface on plain TCP) and the
 * request handling.
 */
final class GatewayChannelInitializer extends ChannelInitializer<SocketChannel> {
  private final ServerConfig config;
  private final SslContext ssl;
  private final ConnectionLimitHandler connectionLimit;
  private final FrontEndProtocols protocols;

  GatewayChannelInitializer(
      ServerConfig config,
      SslContext ssl,
      ConnectionTracker connections,
      ChannelGroup channels,
      HttpService service,
      Clock clock) {
    this.config = config;
    this.ssl = ssl;
    this.connectionLimit = new ConnectionLimitHandler(connections, channels);
    this.protocols = new FrontEndProtocols(config, connections, service, clock);
  }

  long pendingBodyBytes() {
    return protocols.pendingBodyBytes();
  }

  @Override
  protected void initChannel(SocketChannel ch) {
    ChannelPipeline pipeline = ch.pipeline();
    if (ssl != null) {
      pipeline.addLast("tls", ssl.newHandler(ch.alloc()));
    }
    addConnectionHandlers(pipeline);
    pipeline.addLast("protocol",
        ssl != null ? new AlpnProtocolSelector(protocols) : new PriorKnowledgeDetector(protocols));
  }

  /** After TLS, so that even a refusal reaches a TLS client encrypted. */
  private void addConnectionHandlers(ChannelPipeline pipeline) {
    pipeline.addLast("connection-limit", connectionLimit);
    pipeline.addLast(FrontEndProtocols.READ_TIMEOUT, new RequestReadTimeoutHandler(config.requestReadTimeout()));
    pipeline.addLast("idle", protocols.idleHandler());
  }
}
