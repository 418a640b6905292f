package io.spillway.server.testing;

import io.spillway.core.time.Ticker;
import io.spillway.core.upstream.UpstreamHttp;
import io.spillway.server.EventLoops;
import io.spillway.server.client.ClientSettings;
import io.spillway.server.client.NettyUpstreamHttp;
import java.time.Duration;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The data path's client ({@link NettyUpstreamHttp}) on event loops of its own, for tests that
 * build a backend without a gateway: a test class that extends with it gets {@link #http()}, and
 * the loops are shut down once every test class of the run is done (they live in JUnit's root
 * store).
 */
public final class EventLoopClient implements BeforeAllCallback {
  private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(EventLoopClient.class);
  private static volatile Shared shared;

  @Override
  public void beforeAll(ExtensionContext context) {
    shared = context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Shared.class, k -> new Shared(), Shared.class);
  }

  /** The client; the test class must be extended with this class. */
  public static UpstreamHttp http() {
    Shared current = shared;
    if (current == null) {
      throw new IllegalStateException("extend the test class with @ExtendWith(EventLoopClient.class)");
    }
    return current.http;
  }

  /**
   * One of the client's event loops: a request whose {@code CONNECTION_LOOP} attribute names it has
   * its exchange on that loop and shares that loop's pooled connections, as the requests of one
   * client connection do.
   */
  public static Executor loop() {
    http();
    return shared.loops.workers().next();
  }

  private static final class Shared implements AutoCloseable {
    private final EventLoops loops = new EventLoops(2);
    private final UpstreamHttp http = new NettyUpstreamHttp(loops,
        new ClientSettings(Duration.ofSeconds(4), 16, ClientSettings.DEFAULTS.bodyHighWater()), Ticker.system());

    @Override
    public void close() {
      loops.close();
    }
  }
}
