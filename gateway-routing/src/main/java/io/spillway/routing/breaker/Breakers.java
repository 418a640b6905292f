package io.spillway.routing.breaker;

import io.spillway.redis.RedisLink;
import java.time.Clock;

/** Picks the breaker the {@code store} config value asks for. */
public final class Breakers {
  private Breakers() {}

  /**
   * The fleet's breaker in Redis when the process has a Redis link ({@code store: redis://...});
   * this replica's own breaker otherwise ({@code embedded:<dir>}, {@code memory}).
   *
   * @param redis the process's link to Redis, or null when the store is not Redis
   */
  public static Breaker create(RedisLink redis, BreakerSettings config, Clock clock) {
    return create(Breaker.DEFAULT_ROUTE, redis, config, clock);
  }

  /** The breaker of the cloud route named {@code route}, picked as above; each route has its own. */
  public static Breaker create(String route, RedisLink redis, BreakerSettings config, Clock clock) {
    if (redis != null) {
      return FleetBreaker.connect(route, redis, config, clock);
    }
    return new ReplicaBreaker(route, config, clock);
  }
}
