package io.spillway.server.client;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.FastThreadLocal;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.OutboundRequest;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.server.EventLoops;
import java.util.concurrent.Executor;
import javax.net.ssl.TrustManagerFactory;

/**
 * The upstream HTTP client of the data path, on the front end's own event loops: a request's
 * exchange runs on the loop of its client's connection ({@link OutboundRequest#affinity}), so one
 * loop carries it from the client's socket to the upstream's and back. Connections are pooled per
 * loop and origin (no locks: only their loop touches them); HTTP/1.1 connections are kept alive up
 * to the idle timeout, and a pooled one found dead before any answer byte is replaced once by a
 * fresh one. Over TLS, ALPN picks HTTP/2 where the upstream offers it (OpenAI does), so every
 * request of a loop to that origin shares one connection; plain-HTTP upstreams may be told to speak
 * HTTP/2 with prior knowledge ({@link OutboundRequest#h2c}).
 */
public final class NettyUpstreamHttp implements UpstreamHttp {
  private final EventLoops loops;
  private final ClientSettings settings;
  private final Ticker ticker;
  private final ClientTls tls;
  /** Each loop's pool, made by the loop on its first exchange. */
  private final FastThreadLocal<LoopPool> pools = new FastThreadLocal<>();

  public NettyUpstreamHttp(EventLoops loops, ClientSettings settings, Ticker ticker) {
    this(loops, settings, ticker, null);
  }

  /** A client that trusts what {@code trust} trusts over TLS (null: the JDK's default trust store). */
  public NettyUpstreamHttp(EventLoops loops, ClientSettings settings, Ticker ticker, TrustManagerFactory trust) {
    this.loops = loops;
    this.settings = settings;
    this.ticker = ticker;
    this.tls = new ClientTls(trust);
  }

  /** Makes the TLS context now (on the calling thread), so no request waits for it later. */
  public void prepareTls() {
    tls.get();
  }

  @Override
  public UpstreamExchange send(OutboundRequest request) {
    if ("https".equalsIgnoreCase(request.uri().getScheme()) && !(Thread.currentThread() instanceof FastThreadLocalThread)) {
      tls.get(); // made here, on the sending thread, rather than on the loop
    }
    EventLoop loop = loopFor(request.affinity());
    NettyExchange exchange = new NettyExchange(request, loop, settings.bodyHighWater());
    if (loop.inEventLoop()) {
      exchange.start(pool(loop));
    } else {
      loop.execute(() -> exchange.start(pool(loop)));
    }
    return exchange;
  }

  /** The client connection's own loop when it is one of ours, else the next worker. */
  private EventLoop loopFor(Executor affinity) {
    if (affinity instanceof EventLoop loop && loop.parent() == loops.workers()) {
      return loop;
    }
    return loops.workers().next();
  }

  /** This loop's pool; called on the loop only. */
  private LoopPool pool(EventLoop loop) {
    LoopPool pool = pools.get();
    if (pool == null) {
      pool = new LoopPool(loop, loops.socketChannelType(), tls, settings, ticker);
      pools.set(pool);
    }
    return pool;
  }
}
