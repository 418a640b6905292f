package io.spillway.quota.ratelimit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Caller;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Request limits kept in Redis ({@code store: redis://host:port}), so that every replica takes from
 * the same buckets: N gateways together admit no more than one gateway would. Each bucket is one
 * Redis key {@code spillway:ratelimit:<limit key>}, updated with compare-and-swap by Bucket4j, and
 * expires once it would be full again.
 *
 * <p>If Redis cannot be reached, requests are limited by this replica's own buckets (a replica then
 * admits up to the full limit by itself) and an error is logged once per outage; with
 * {@code quota.failClosed: true} they are refused with 503 instead. Commands fail at once while the
 * connection is down (Lettuce reconnects in the background), so an outage adds no waiting. The
 * command timeout is Lettuce's, settable in the URI ({@code redis://host:6379?timeout=2s}).
 */
public final class RedisRequestLimiter implements RequestLimiter {
  private static final Logger log = LoggerFactory.getLogger(RedisRequestLimiter.class);
  private static final String PREFIX = "spillway:ratelimit:";

  private final RedisClient client;
  private final StatefulRedisConnection<byte[], byte[]> connection;
  private final BucketRequestLimiter shared;
  private final BucketRequestLimiter fallback;
  private final boolean failClosed;
  private final AtomicBoolean unreachable = new AtomicBoolean();

  private RedisRequestLimiter(
      RedisClient client, StatefulRedisConnection<byte[], byte[]> connection, RateLimitPolicy policy, Clock clock,
      boolean failClosed) {
    this.client = client;
    this.connection = connection;
    this.failClosed = failClosed;
    this.fallback = new LocalRequestLimiter(policy, clock);
    ProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(connection)
        .clientClock(new ClockTimeMeter(clock))
        .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
        .build();
    this.shared = new BucketRequestLimiter(policy) {
      @Override
      protected Bucket bucket(RateLimit limit) {
        byte[] key = (PREFIX + limit.key()).getBytes(StandardCharsets.UTF_8);
        return buckets.builder().build(key, () -> configuration(limit));
      }
    };
  }

  /**
   * Connects to {@code redisUri}; throws {@link IllegalStateException} naming the URI (without its
   * password) when Redis cannot be reached at start.
   */
  public static RedisRequestLimiter connect(String redisUri, RateLimitPolicy policy, Clock clock, boolean failClosed) {
    RedisURI uri = RedisURI.create(redisUri);
    RedisClient client = RedisClient.create(uri);
    client.setOptions(ClientOptions.builder()
        .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
        .build());
    try {
      return new RedisRequestLimiter(client, client.connect(ByteArrayCodec.INSTANCE), policy, clock, failClosed);
    } catch (RuntimeException e) {
      client.shutdown(Duration.ZERO, Duration.ZERO);
      throw new IllegalStateException("cannot reach Redis for rate limits at " + uri.getHost() + ":" + uri.getPort()
          + ": " + e.getMessage(), e);
    }
  }

  @Override
  public Decision acquire(Caller caller) {
    Decision decision;
    try {
      decision = shared.acquire(caller);
    } catch (RuntimeException e) {
      if (unreachable.compareAndSet(false, true)) {
        log.error("Redis is unreachable for rate limits ({}); {}", e.toString(),
            failClosed ? "refusing limited requests (quota.failClosed)" : "limiting with this replica's own buckets");
      }
      if (failClosed) {
        throw GatewayException.of(ErrorKind.UNAVAILABLE,
            "Spillway cannot check rate limits right now; please retry shortly", null);
      }
      return fallback.acquire(caller);
    }
    if (decision.limited() && unreachable.compareAndSet(true, false)) {
      log.warn("Redis is reachable again; rate limits are shared across replicas again");
    }
    return decision;
  }

  @Override
  public void limits(RateLimitPolicy policy) {
    shared.limits(policy);
    fallback.limits(policy);
  }

  /** Whether the last limited request was decided by the shared buckets in Redis. */
  public boolean sharing() {
    return !unreachable.get();
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown(Duration.ZERO, Duration.ZERO);
  }
}
