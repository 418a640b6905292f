package io.spillway.quota.keys;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Keys shared by every replica through Redis:
 * <ul>
 *   <li>{@code spillway:keys}: hash id → the key's stored JSON (hash of the secret, team, tier, limits)</li>
 *   <li>{@code spillway:keys:version}: a counter every change increments; replicas poll it every
 *       {@code admin.keySyncInterval} and read the hash again when it moved</li>
 *   <li>{@code spillway:keys:usage:<month>}: hash id → tokens settled that month, kept
 *       {@value #USAGE_KEPT_DAYS} days</li>
 * </ul>
 * Every call is bounded by {@code quota.storeTimeout}; a call Redis does not answer throws
 * {@link KeyStoreUnavailableException}.
 */
public final class RedisKeyStore implements KeyStore {
  static final String KEYS = "spillway:keys";
  static final String VERSION = "spillway:keys:version";
  static final String USAGE = "spillway:keys:usage:";
  static final int USAGE_KEPT_DAYS = 93;

  private final RedisClient client;
  private final String location;
  private volatile StatefulRedisConnection<String, String> connection;

  public RedisKeyStore(String uri, Duration timeout) {
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(timeout);
    this.location = redisUri.getHost() + ":" + redisUri.getPort();
    this.client = RedisClient.create(redisUri);
    client.setOptions(ClientOptions.builder()
        .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
        .timeoutOptions(TimeoutOptions.enabled(timeout))
        .build());
  }

  @Override
  public List<ApiKey> all() {
    List<ApiKey> out = new ArrayList<>();
    call(redis -> redis.hvals(KEYS)).forEach(stored -> out.add(ApiKey.fromStored(stored)));
    return out;
  }

  @Override
  public void put(ApiKey key) {
    call(redis -> {
      redis.hset(KEYS, key.id(), key.toStored());
      return redis.incr(VERSION);
    });
  }

  @Override
  public boolean remove(String id) {
    return call(redis -> {
      boolean removed = redis.hdel(KEYS, id) == 1;
      if (removed) {
        redis.incr(VERSION);
      }
      return removed;
    });
  }

  @Override
  public long version() {
    String value = call(redis -> redis.get(VERSION));
    return value == null ? 0 : Long.parseLong(value);
  }

  @Override
  public long usage(String month, String id) {
    String value = call(redis -> redis.hget(USAGE + month, id));
    return value == null ? 0 : Long.parseLong(value);
  }

  @Override
  public void addUsage(String month, String id, long tokens) {
    call(redis -> {
      redis.hincrby(USAGE + month, id, tokens);
      return redis.expire(USAGE + month, Duration.ofDays(USAGE_KEPT_DAYS));
    });
  }

  @Override
  public String describe() {
    return "redis " + location;
  }

  private <T> T call(Function<RedisCommands<String, String>, T> operation) {
    try {
      return operation.apply(connection().sync());
    } catch (RuntimeException e) {
      throw new KeyStoreUnavailableException("the key store (Redis at " + location + ") did not answer: " + e, e);
    }
  }

  private synchronized StatefulRedisConnection<String, String> connection() {
    StatefulRedisConnection<String, String> c = connection;
    if (c == null || !c.isOpen()) {
      c = client.connect();
      connection = c;
    }
    return c;
  }

  @Override
  public synchronized void close() {
    if (connection != null) {
      connection.close();
    }
    client.shutdown();
  }
}
