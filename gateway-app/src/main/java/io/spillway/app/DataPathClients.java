package io.spillway.app;

import io.spillway.config.CloudRouteConfig;
import io.spillway.config.GatewayConfig;
import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.server.EventLoops;
import io.spillway.server.client.ClientSettings;
import io.spillway.server.client.NettyUpstreamHttp;

/**
 * The data path's transport: the event loops the front end and the upstream clients share, and one
 * client for the cloud routes and one for the local servers (their idle timeout is shorter than the
 * cloud's: uvicorn, under vLLM, closes idle connections after 5 s).
 */
final class DataPathClients implements AutoCloseable {
  private final GatewayConfig config;
  private final EventLoops loops = new EventLoops();
  private final NettyUpstreamHttp cloud;
  private final NettyUpstreamHttp local;

  DataPathClients(GatewayConfig config, Ticker ticker) {
    this.config = config;
    int bodyHighWater = ClientSettings.DEFAULTS.bodyHighWater();
    this.cloud = new NettyUpstreamHttp(loops, new ClientSettings(config.cloud().poolIdleTimeout(),
        config.cloud().maxIdleConnections(), bodyHighWater), ticker);
    this.local = new NettyUpstreamHttp(loops, new ClientSettings(config.local().poolIdleTimeout(),
        ClientSettings.DEFAULTS.maxIdlePerOrigin(), bodyHighWater), ticker);
  }

  EventLoops loops() {
    return loops;
  }

  UpstreamHttp cloud() {
    return cloud;
  }

  UpstreamHttp local() {
    return local;
  }

  /**
   * Whether every upstream is multiplexed (h2c on every cloud route and local server): then a
   * client connection holds no upstream socket of its own.
   */
  boolean multiplexed() {
    return config.cloud().effectiveRoutes().stream().allMatch(CloudRouteConfig::usesH2c)
        && (!config.local().enabled()
            || config.local().serverList().stream().allMatch(server -> config.local().forServer(server).h2c()));
  }

  /** Once the listener is up: makes the cloud client's TLS context aside when a route is https. */
  void warmUpTls() {
    if (config.cloud().effectiveRoutes().stream().anyMatch(route -> route.baseUrl().startsWith("https"))) {
      Thread.ofVirtual().name("spillway-tls-warm-up").start(cloud::prepareTls);
    }
  }

  @Override
  public void close() {
    loops.close();
  }
}
