package io.spillway.routing.breaker;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import java.time.Duration;

/**
 * The Redis client the fleet's shared state uses (breakers, risk counts): every command, the
 * connect included, bounded by {@code failover.fleetTimeout}; no automatic reconnect and no command
 * queued while disconnected, so a caller learns at once that Redis is away and falls back to its own
 * state; the owner reconnects on its own schedule.
 */
final class FleetRedis {
  private FleetRedis() {}

  /** {@code uri} with every command bounded by {@code timeout}. */
  static RedisURI uri(String uri, Duration timeout) {
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(timeout);
    return redisUri;
  }

  /** A client for {@code uri} that fails fast, as above. */
  static RedisClient client(RedisURI uri, Duration timeout) {
    RedisClient client = RedisClient.create(uri);
    client.setOptions(ClientOptions.builder()
        .autoReconnect(false)
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
        .timeoutOptions(TimeoutOptions.enabled(timeout))
        .build());
    return client;
  }
}
