package io.spillway.quota.store;

import io.spillway.redis.RedisLink;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many threads (and, on Redis, two replicas) race for one pool. Every request settles exactly what
 * it reserved, so any over-admission would show as usage past the ceiling.
 */
class ConcurrentReservationTest {
  private static final long CEILING = 20_000;
  private static final int THREADS = 16;
  private static final int ATTEMPTS_PER_THREAD = 250;
  private static final int MAX_REQUEST = 200;
  private static final PoolKey POOL = new PoolKey("2026-11", Tier.BRONZE);

  @TempDir Path dir;
  private final List<AutoCloseable> resources = new ArrayList<>();
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");

  @AfterEach
  void tearDown() throws Exception {
    for (AutoCloseable resource : resources.reversed()) {
      resource.close();
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"memory", "embedded", "redis, two replicas"})
  void manyConcurrentRequestsNeverOverAdmitAPool(String kind) throws Exception {
    List<UsageStore> replicas = open(kind);
    AtomicLong settled = new AtomicLong();
    CountDownLatch go = new CountDownLatch(1);
    ExecutorService threads = Executors.newFixedThreadPool(THREADS);
    List<Future<?>> done = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      UsageStore replica = replicas.get(t % replicas.size());
      String team = "team-" + (t % 4);
      done.add(threads.submit(() -> {
        go.await();
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int i = 0; i < ATTEMPTS_PER_THREAD; i++) {
          long tokens = 1 + random.nextInt(MAX_REQUEST);
          ReserveOutcome outcome = replica.reserve(POOL, team, tokens, CEILING);
          assertThat(outcome.usage().committed()).isLessThanOrEqualTo(CEILING);
          if (outcome.admitted()) {
            replica.settle(outcome.hold(), tokens);
            settled.addAndGet(tokens);
          }
        }
        return null;
      }));
    }
    go.countDown();
    for (Future<?> future : done) {
      future.get();
    }
    threads.shutdown();

    PoolUsage usage = replicas.getFirst().usage(POOL);
    assertThat(usage.used()).isEqualTo(settled.get()).isLessThanOrEqualTo(CEILING)
        .isGreaterThan(CEILING - MAX_REQUEST);
    assertThat(usage.reserved()).isZero();
    assertThat(replicas.getLast().teamUsage("2026-11").values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(settled.get());
  }

  private List<UsageStore> open(String kind) {
    switch (kind) {
      case "memory" -> {
        return List.of(track(new MemoryUsageStore()));
      }
      case "embedded" -> {
        return List.of(track(EmbeddedUsageStore.open(dir, Duration.ofMillis(50))));
      }
      default -> {
        RedisServer redis = track(RedisServer.start(dir));
        return List.of(track(redisStore(redis)), track(redisStore(redis)));
      }
    }
  }

  private RedisUsageStore redisStore(RedisServer redis) {
    // Each store is a replica of its own: its own link.
    return new RedisUsageStore(track(RedisLink.open(redis.uri(), Duration.ofSeconds(5))), Duration.ofSeconds(5),
        Duration.ofMillis(100), Duration.ofHours(1), false, clock);
  }

  private <T extends AutoCloseable> T track(T resource) {
    resources.add(resource);
    return resource;
  }
}
