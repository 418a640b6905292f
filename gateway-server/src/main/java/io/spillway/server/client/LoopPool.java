package io.spillway.server.client;

import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.util.concurrent.ScheduledFuture;
import io.spillway.core.time.Ticker;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The upstream connections of one event loop, by origin. Touched only on its loop. A sweep every
 * quarter of the idle timeout closes connections idle longer than it.
 */
final class LoopPool {
  private final EventLoop loop;
  private final Class<? extends SocketChannel> channelType;
  private final ClientTls tls;
  private final ClientSettings settings;
  private final Ticker ticker;
  private final Map<Origin, OriginPool> origins = new HashMap<>();
  private ScheduledFuture<?> sweep;

  LoopPool(EventLoop loop, Class<? extends SocketChannel> channelType, ClientTls tls, ClientSettings settings,
      Ticker ticker) {
    this.loop = loop;
    this.channelType = channelType;
    this.tls = tls;
    this.settings = settings;
    this.ticker = ticker;
  }

  OriginPool origin(Origin origin) {
    OriginPool pool = origins.get(origin);
    if (pool == null) {
      pool = new OriginPool(origin, loop, channelType, tls, settings, ticker);
      origins.put(origin, pool);
      if (sweep == null) {
        long every = Math.max(100, settings.idleTimeout().toMillis() / 4);
        sweep = loop.scheduleAtFixedRate(this::sweep, every, every, TimeUnit.MILLISECONDS);
      }
    }
    return pool;
  }

  private void sweep() {
    long now = ticker.read();
    for (OriginPool pool : origins.values()) {
      pool.closeIdle(now);
    }
  }
}
