package io.spillway.routing.breaker;

import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.FailoverConfig;
import java.time.Clock;

/** Picks the breaker the {@code store} config value asks for. */
public final class Breakers {
  private Breakers() {}

  /**
   * The fleet's breaker in Redis for {@code store: redis://...} (or {@code rediss://}); this
   * replica's own breaker for anything else ({@code embedded:<dir>}, {@code memory}).
   */
  public static Breaker create(String store, FailoverConfig config, Clock clock, MeterRegistry meters) {
    return create(Breaker.DEFAULT_ROUTE, store, config, clock, meters);
  }

  /** The breaker of the cloud route named {@code route}, picked as above; each route has its own. */
  public static Breaker create(String route, String store, FailoverConfig config, Clock clock, MeterRegistry meters) {
    if (store.startsWith("redis://") || store.startsWith("rediss://")) {
      return FleetBreaker.connect(route, store, config, clock, meters);
    }
    return new LocalBreaker(route, config, clock, meters);
  }
}
