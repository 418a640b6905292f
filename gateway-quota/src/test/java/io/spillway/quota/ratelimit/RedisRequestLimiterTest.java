package io.spillway.quota.ratelimit;

import io.spillway.redis.testing.RedisServer;
import io.spillway.redis.RedisLink;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.spillway.config.QuotaConfig;
import io.spillway.core.error.ErrorKind;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Rate limits in a real redis-server, shared by two limiters that stand for two gateway replicas. */
class RedisRequestLimiterTest {
  private static final Caller WEB = new Caller("web", Tier.SILVER, "k1");
  private static final Caller SANDBOX = new Caller("sandbox", Tier.BRONZE, "k2");

  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final RateLimitPolicy policy = new RateLimitPolicy(QuotaConfig.DEFAULTS);
  private final List<RedisRequestLimiter> limiters = new ArrayList<>();
  private final List<RedisLink> links = new ArrayList<>();
  private RedisServer redis;

  @BeforeEach
  void startRedis() {
    redis = RedisServer.start();
  }

  @AfterEach
  void stopRedis() {
    limiters.forEach(RedisRequestLimiter::close);
    links.forEach(RedisLink::close);
    if (redis != null) {
      redis.close();
    }
  }

  @Test
  void twoReplicasSharingRedisNeverAdmitMoreThanTheLimitTogether() throws Exception {
    RedisRequestLimiter first = limiter(false);
    RedisRequestLimiter second = limiter(false);

    List<Callable<Boolean>> calls = new ArrayList<>();
    for (int i = 0; i < 80; i++) {
      RedisRequestLimiter replica = i % 2 == 0 ? first : second;
      calls.add(() -> replica.acquire(WEB).allowed());
    }
    int allowed = 0;
    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      for (Future<Boolean> result : threads.invokeAll(calls)) {
        allowed += result.get() ? 1 : 0;
      }
    }

    assertThat(allowed).as("silver's 50 per minute, across both replicas").isEqualTo(50);
    Decision refused = second.acquire(WEB);
    assertThat(refused.allowed()).isFalse();
    assertThat(refused.retryAfter()).isEqualTo(Duration.ofMillis(1200));
  }

  @Test
  void sharedLimitsRefillWithTheClock() {
    RedisRequestLimiter first = limiter(false);
    RedisRequestLimiter second = limiter(false);
    for (int i = 0; i < 200; i++) {
      assertThat((i % 2 == 0 ? first : second).acquire(SANDBOX).allowed()).isTrue();
    }
    assertThat(first.acquire(SANDBOX).allowed()).isFalse();

    clock.advance(Duration.ofSeconds(18));

    Decision refilled = second.acquire(SANDBOX);
    assertThat(refilled.allowed()).isTrue();
    assertThat(refilled.remaining()).isZero();
    assertThat(first.acquire(SANDBOX).allowed()).isFalse();
  }

  @Test
  void withRedisGoneRequestsAreLimitedByTheReplicasOwnBuckets() {
    RedisRequestLimiter replica = limiter(false);
    assertThat(replica.acquire(WEB).remaining()).isEqualTo(49);

    redis.stop();

    for (int i = 0; i < 50; i++) {
      assertThat(replica.acquire(WEB).allowed()).isTrue();
    }
    assertThat(replica.acquire(WEB).allowed()).isFalse();
  }

  @Test
  void whenRedisIsBackLimitsAreSharedAgain() {
    RedisRequestLimiter replica = limiter(false);
    redis.stop();
    assertThat(replica.acquire(WEB).allowed()).isTrue();
    assertThat(replica.sharing()).isFalse();

    redis.restart();
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200))
        .until(() -> replica.acquire(WEB).allowed() && replica.sharing());

    RedisRequestLimiter other = limiter(false);
    long leftInRedis = other.acquire(WEB).remaining();
    assertThat(replica.acquire(WEB).remaining()).isEqualTo(leftInRedis - 1);
  }

  @Test
  void withRedisGoneAndFailClosedLimitedRequestsAreRefusedWith503() {
    RedisRequestLimiter replica = limiter(true);
    redis.stop();

    assertThatThrownBy(() -> replica.acquire(WEB))
        .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.kind()).isEqualTo(ErrorKind.UNAVAILABLE));
    assertThat(replica.acquire(new Caller("release", Tier.GOLD, "k3")).allowed())
        .as("gold has no request limit to check").isTrue();
  }

  @Test
  void aHungRedisCostsOneRequestItsTimeoutAndIsThenAskedOnlyByTheBackgroundProbe() throws Exception {
    Duration timeout = Duration.ofSeconds(1);
    RedisRequestLimiter replica = limiter(false, timeout);
    RedisRequestLimiter other = limiter(false, timeout);
    assertThat(replica.acquire(WEB).remaining()).isEqualTo(49);
    assertThat(redis.command("CONFIG RESETSTAT")).isEqualTo("+OK");

    redis.freeze();
    long started = System.nanoTime();
    assertThat(replica.acquire(WEB).allowed()).as("the request that finds Redis hung").isTrue();
    assertThat(replica.sharing()).isFalse();
    for (int i = 0; i < 20; i++) {
      assertThat(replica.acquire(WEB).allowed()).isTrue();
    }
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    // Generous: without the backoff each of the 21 requests waited the timeout (21 s).
    assertThat(took).as("21 requests against a hung Redis").isLessThan(timeout.multipliedBy(5));

    redis.thaw();
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(replica::sharing);
    assertThat(bucketCommandsRedisRan())
        .as("what the limiter sent while Redis was frozen (Redis ran it on waking): one request's, no more")
        .isLessThanOrEqualTo(2);
    long leftInRedis = other.acquire(WEB).remaining();
    assertThat(replica.acquire(WEB).remaining()).as("shared again").isEqualTo(leftInRedis - 1);
  }

  @Test
  void withFailClosedAHungRedisRefusesLimitedRequestsAtOnceAfterTheFirst() {
    Duration timeout = Duration.ofSeconds(1);
    RedisRequestLimiter replica = limiter(true, timeout);
    assertThat(replica.acquire(WEB).allowed()).isTrue();

    redis.freeze();
    long started = System.nanoTime();
    for (int i = 0; i < 10; i++) {
      assertThatThrownBy(() -> replica.acquire(WEB)).isInstanceOfSatisfying(GatewayException.class,
          e -> assertThat(e.kind()).isEqualTo(ErrorKind.UNAVAILABLE));
    }
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(timeout.multipliedBy(5));
    assertThat(replica.acquire(new Caller("release", Tier.GOLD, "k3")).allowed())
        .as("gold has no request limit to check").isTrue();
    redis.thaw();
    await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(replica::sharing);
    assertThat(replica.acquire(WEB).allowed()).isTrue();
  }

  /** The commands Redis ran since {@code CONFIG RESETSTAT} other than pings and this test's own. */
  private long bucketCommandsRedisRan() {
    RedisLink link = link();
    try (io.spillway.redis.RedisSession session = link.session("test", Duration.ofSeconds(5))) {
      String stats = session.connectAndCall(c -> c.info("commandstats"));
      return stats.lines().filter(line -> line.startsWith("cmdstat_"))
          .filter(line -> !line.matches("cmdstat_(ping|info|config|hello|client\\|.*|command.*):.*"))
          .mapToLong(line -> Long.parseLong(line.replaceAll(".*calls=(\\d+),.*", "$1"))).sum();
    }
  }

  private RedisRequestLimiter limiter(boolean failClosed, Duration timeout) {
    RedisRequestLimiter limiter =
        RedisRequestLimiter.connect(link(), timeout, policy, clock, failClosed, Duration.ofMillis(200));
    limiters.add(limiter);
    return limiter;
  }

  private RedisRequestLimiter limiter(boolean failClosed) {
    RedisRequestLimiter limiter =
        RedisRequestLimiter.connect(link(), Duration.ofSeconds(2), policy, clock, failClosed, Duration.ofMillis(200));
    limiters.add(limiter);
    return limiter;
  }

  /** Each limiter is a replica of its own: its own link to Redis. */
  private RedisLink link() {
    RedisLink link = RedisLink.open(redis.uri(), Duration.ofSeconds(2));
    links.add(link);
    return link;
  }
}
