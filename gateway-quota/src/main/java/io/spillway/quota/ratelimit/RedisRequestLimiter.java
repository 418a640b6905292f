package io.spillway.quota.ratelimit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.api.StatefulRedisConnection;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Caller;
import io.spillway.redis.RedisLink;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 * connection is down, and wait at most {@code quota.storeTimeout} on a Redis that is up but hung, so
 * an outage adds no more waiting than that. While the connection is down this limiter connects again
 * every {@code retryEvery} in the background.
 *
 * <p>A replica started while Redis is down starts all the same, limiting on its own buckets (or
 * refusing, with {@code failClosed}), and shares the buckets from the first successful connect on.
 * The usage store logs that outage; this class logs nothing more for it than one DEBUG line.
 */
public final class RedisRequestLimiter implements RequestLimiter {
  private static final Logger log = LoggerFactory.getLogger(RedisRequestLimiter.class);
  private static final String PREFIX = "spillway:ratelimit:";

  private final RedisLink link;
  private final Duration timeout;
  private final String location;
  private final Clock clock;
  private final BucketRequestLimiter fallback;
  private final boolean failClosed;
  private final AtomicBoolean unreachable = new AtomicBoolean();
  private final ScheduledExecutorService reconnect;
  private volatile StatefulRedisConnection<byte[], byte[]> connection;
  private volatile BucketRequestLimiter shared;
  private RateLimitPolicy policy;

  private RedisRequestLimiter(RedisLink link, Duration timeout, RateLimitPolicy policy, Clock clock,
      boolean failClosed, Duration retryEvery) {
    this.link = link;
    this.timeout = timeout;
    this.location = link.location();
    this.policy = policy;
    this.clock = clock;
    this.failClosed = failClosed;
    this.fallback = new ReplicaRequestLimiter(policy, clock);
    if (!tryConnect()) {
      unreachable.set(true);
      log.debug("Redis at {} is unreachable at start; rate limits are {} until it answers", location,
          failClosed ? "refused (quota.failClosed)" : "this replica's own");
    }
    this.reconnect = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-redis-ratelimit").daemon(true).factory());
    long every = Math.max(1, retryEvery.toMillis());
    reconnect.scheduleWithFixedDelay(this::connectLater, every, every, TimeUnit.MILLISECONDS);
  }

  /**
   * Shares buckets in Redis over {@code link}, each command bounded by {@code timeout}
   * ({@code quota.storeTimeout}). When Redis cannot be reached yet, the limiter starts anyway (see
   * the class doc) and tries again every {@code retryEvery}; it never throws for an unreachable Redis.
   */
  public static RedisRequestLimiter connect(RedisLink link, Duration timeout, RateLimitPolicy policy, Clock clock,
      boolean failClosed, Duration retryEvery) {
    return new RedisRequestLimiter(link, timeout, policy, clock, failClosed, retryEvery);
  }

  private synchronized boolean tryConnect() {
    StatefulRedisConnection<byte[], byte[]> current = connection;
    if (shared != null && current != null && current.isOpen()) {
      return true;
    }
    if (current != null && current.isOpen()) {
      current.closeAsync();
    }
    StatefulRedisConnection<byte[], byte[]> opened;
    try {
      opened = link.connectBinary(timeout);
    } catch (RuntimeException e) {
      return false;
    }
    ProxyManager<byte[]> buckets = Bucket4jLettuce.casBasedBuilder(opened)
        .clientClock(new ClockTimeMeter(clock))
        .expirationAfterWrite(ExpirationAfterWriteStrategy.basedOnTimeForRefillingBucketUpToMax(Duration.ZERO))
        .build();
    connection = opened;
    shared = new BucketRequestLimiter(policy) {
      @Override
      protected Bucket bucket(RateLimit limit) {
        byte[] key = (PREFIX + limit.key()).getBytes(StandardCharsets.UTF_8);
        return buckets.builder().build(key, () -> configuration(limit));
      }
    };
    return true;
  }

  private void connectLater() {
    StatefulRedisConnection<byte[], byte[]> current = connection;
    if (shared != null && current != null && current.isOpen()) {
      return; // connected, perhaps slow: the requests' own calls tell whether Redis answers
    }
    if (tryConnect() && unreachable.compareAndSet(true, false)) {
      log.warn("Redis at {} is reachable; rate limits are shared across replicas", location);
    }
  }

  @Override
  public boolean mayBlock() {
    return true;
  }

  @Override
  public Decision acquire(Caller caller) {
    Decision decision;
    try {
      BucketRequestLimiter buckets = shared;
      if (buckets == null) {
        throw new IllegalStateException("not connected to Redis at " + location + " yet");
      }
      decision = buckets.acquire(caller);
    } catch (RuntimeException e) {
      if (unreachable.compareAndSet(false, true)) {
        log.error("Redis is unreachable for rate limits ({}); {}", e.toString(),
            failClosed ? "refusing limited requests (quota.failClosed)" : "limiting with this replica's own buckets");
      }
      if (failClosed) {
        throw ErrorKind.UNAVAILABLE.exception(
            "Spillway cannot check rate limits right now; please retry shortly");
      }
      return fallback.acquire(caller);
    }
    if (decision.limited() && unreachable.compareAndSet(true, false)) {
      log.warn("Redis is reachable again; rate limits are shared across replicas again");
    }
    return decision;
  }

  @Override
  public synchronized void limits(RateLimitPolicy next) {
    this.policy = next;
    BucketRequestLimiter buckets = shared;
    if (buckets != null) {
      buckets.limits(next);
    }
    fallback.limits(next);
  }

  /** Whether the last limited request was decided by the shared buckets in Redis. */
  public boolean sharing() {
    return !unreachable.get();
  }

  @Override
  public void close() {
    reconnect.shutdownNow();
    StatefulRedisConnection<byte[], byte[]> c = connection;
    if (c != null) {
      c.closeAsync();
    }
  }
}
