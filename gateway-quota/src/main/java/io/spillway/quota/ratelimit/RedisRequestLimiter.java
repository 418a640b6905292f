package io.spillway.quota.ratelimit;

import io.github.bucket4j.Bucket;
import io.github.bucket4j.distributed.ExpirationAfterWriteStrategy;
import io.github.bucket4j.distributed.proxy.ProxyManager;
import io.github.bucket4j.redis.lettuce.Bucket4jLettuce;
import io.lettuce.core.api.StatefulRedisConnection;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Caller;
import io.spillway.config.Durations;
import io.spillway.redis.RedisCommandException;
import io.spillway.redis.RedisLink;
import io.spillway.redis.RedisOutage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.time.temporal.ChronoUnit;
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
 * {@code quota.failClosed: true} they are refused with 503 instead. The outage rule is the usage
 * store's: the request that finds Redis away (the connection down, or no answer within
 * {@code quota.storeTimeout} from a Redis that is up but hung) marks it away, and from then on no
 * request asks Redis; every {@code retryEvery} a background task connects again or, on a connection
 * that is still open, sends a {@code PING} (bounded by the same timeout), and the first answer ends
 * the outage. So a hung Redis costs one request {@code quota.storeTimeout}, not every request. An
 * error Redis answers with (a refused command) is no outage: it is logged, and that request is
 * limited by the replica's own buckets.
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
  private final RedisOutage outage;
  private final ScheduledExecutorService reconnect;
  private volatile StatefulRedisConnection<byte[], byte[]> connection;
  private volatile BucketRequestLimiter shared;
  private final Duration retryEvery;
  private volatile RateLimitPolicy policy;

  private RedisRequestLimiter(RedisLink link, Duration timeout, RateLimitPolicy policy, Clock clock,
      boolean failClosed, Duration retryEvery) {
    this.link = link;
    this.timeout = timeout;
    this.location = link.location();
    this.policy = policy;
    this.clock = clock;
    this.failClosed = failClosed;
    this.retryEvery = retryEvery;
    this.fallback = new ReplicaRequestLimiter(policy, clock);
    this.outage = new RedisOutage(false, clock.instant());
    if (!tryConnect()) {
      outage.begin(clock.instant(), null);
      log.debug("Redis at {} is unreachable at start; rate limits are {} until it answers", location,
          failClosed ? "refused (quota.failClosed)" : "this replica's own");
    }
    this.reconnect = Executors.newSingleThreadScheduledExecutor(
        Thread.ofPlatform().name("spillway-redis-ratelimit").daemon(true).factory());
    long every = Math.max(1, retryEvery.toMillis());
    reconnect.scheduleWithFixedDelay(this::probe, every, every, TimeUnit.MILLISECONDS);
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

  /**
   * While Redis is away, off the request path: connects again, or asks the open connection for a
   * {@code PING}; the first answer ends the outage. Does nothing while Redis is reachable: the
   * requests' own calls tell when it goes.
   */
  private void probe() {
    if (!outage.away()) {
      return;
    }
    try {
      StatefulRedisConnection<byte[], byte[]> current = connection;
      if (shared == null || current == null || !current.isOpen()) {
        if (!tryConnect()) {
          return;
        }
      } else {
        current.sync().ping();
      }
    } catch (RuntimeException e) {
      return; // still away
    }
    Duration away = outage.end(clock.instant());
    if (away != null) {
      log.warn("Redis at {} is reachable again (away {}); rate limits are shared across replicas again", location,
          Durations.format(away.truncatedTo(ChronoUnit.SECONDS)));
    }
  }

  @Override
  public boolean mayBlock() {
    return true;
  }

  @Override
  public Decision acquire(Caller caller) {
    BucketRequestLimiter buckets = shared;
    if (buckets == null || outage.away()) {
      return withoutRedis(caller);
    }
    try {
      return buckets.acquire(caller);
    } catch (RuntimeException e) {
      RuntimeException what = link.classify(e);
      if (what instanceof RedisCommandException) {
        log.error("Redis at {} refused a rate-limit command (it answers; this is not an outage): {}; limiting "
            + "this request with this replica's own buckets", location, what.getMessage());
        return fallback.acquire(caller);
      }
      if (outage.begin(clock.instant(), what)) {
        log.error("Redis is unreachable for rate limits ({}); {} until it answers again (asked every {} in the "
            + "background, not by requests)", what.getMessage(),
            failClosed ? "refusing limited requests (quota.failClosed)" : "limiting with this replica's own buckets",
            Durations.format(retryEvery));
      }
      return withoutRedis(caller);
    }
  }

  /** The decision while Redis is away: this replica's own buckets, or 503 with {@code quota.failClosed}. */
  private Decision withoutRedis(Caller caller) {
    if (failClosed && !policy.limitsFor(caller).isEmpty()) {
      throw ErrorKind.UNAVAILABLE.exception("Spillway cannot check rate limits right now; please retry shortly");
    }
    return fallback.acquire(caller);
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

  /** Whether limited requests are decided by the shared buckets in Redis (false while it is away). */
  public boolean sharing() {
    return !outage.away();
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
