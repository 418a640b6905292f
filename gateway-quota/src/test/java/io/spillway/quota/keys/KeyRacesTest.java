package io.spillway.quota.keys;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.pipeline.Tier;
import io.spillway.core.testing.FakeClock;
import io.spillway.redis.RedisLink;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Revoke, rotate and create racing each other (issue 25, finding 4): in every store (on Redis as two
 * replicas, each with its own link, on one real redis-server), a revoked key stays revoked whatever
 * races it, two rotates both apply so every secret they answered works, and a second rotation keeps
 * the first one's overlap.
 */
class KeyRacesTest {
  static final int TRIALS = 20;
  static final Duration OVERLAP = Duration.ofHours(1);

  @TempDir Path dir;
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final List<AutoCloseable> resources = new ArrayList<>();
  final ExecutorService threads = Executors.newFixedThreadPool(2);

  @AfterEach
  void close() throws Exception {
    threads.shutdownNow();
    for (AutoCloseable resource : resources.reversed()) {
      resource.close();
    }
  }

  /** Two replicas' views of one store: on Redis each replica has its own link and store. */
  List<ApiKeys> replicas(String kind) {
    List<ApiKeys> two = new ArrayList<>();
    switch (kind) {
      case "memory" -> {
        KeyStore shared = new MemoryKeyStore();
        two.add(track(new ApiKeys(shared, clock)));
        two.add(track(new ApiKeys(shared, clock)));
      }
      case "embedded" -> {
        KeyStore shared = EmbeddedKeyStore.open(dir);
        two.add(track(new ApiKeys(shared, clock)));
        two.add(new ApiKeys(shared, clock)); // the store is closed once, by the first
      }
      default -> {
        RedisServer redis = track(RedisServer.start());
        for (int i = 0; i < 2; i++) {
          RedisLink link = track(RedisLink.open(redis.uri(), Duration.ofSeconds(5)));
          two.add(track(new ApiKeys(new RedisKeyStore(link, Duration.ofSeconds(5)), clock)));
        }
      }
    }
    return two;
  }

  <T extends AutoCloseable> T track(T resource) {
    resources.add(resource);
    return resource;
  }

  static ApiKeys.NewKey key() {
    return new ApiKeys.NewKey("ci", Tier.SILVER, null, List.of(), null, null);
  }

  /** Runs both at once (released together) and answers their results. */
  <A, B> List<Object> race(Callable<A> first, Callable<B> second) throws Exception {
    CountDownLatch start = new CountDownLatch(1);
    Future<A> a = threads.submit(() -> {
      start.await();
      return first.call();
    });
    Future<B> b = threads.submit(() -> {
      start.await();
      return second.call();
    });
    start.countDown();
    List<Object> results = new ArrayList<>();
    results.add(a.get());
    results.add(b.get());
    return results;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"memory", "embedded", "redis"})
  void aKeyRevokedOnOneReplicaWhileAnotherRotatesItStaysRevoked(String kind) throws Exception {
    List<ApiKeys> replicas = replicas(kind);
    ApiKeys a = replicas.get(0);
    ApiKeys b = replicas.get(1);
    for (int trial = 0; trial < TRIALS; trial++) {
      ApiKeys.Issued issued = a.create(key());
      String id = issued.key().id();
      b.sync();

      List<Object> results = race(() -> a.revoke(id), () -> b.rotate(id, OVERLAP));
      a.sync();
      b.sync();

      assertThat(results.get(0)).as("the revoke answered it revoked the key").isEqualTo(true);
      assertThat(a.find(id)).as("trial %d: revoked in the store", trial).isNull();
      for (ApiKeys replica : replicas) {
        assertThat(replica.list()).extracting(ApiKey::id).doesNotContain(id);
        assertThat(replica.authenticate(issued.secret())).isNull();
        if (results.get(1) instanceof ApiKeys.Issued rotated) {
          assertThat(replica.authenticate(rotated.secret())).as("the rotated secret of a revoked key").isNull();
        }
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"memory", "embedded", "redis"})
  void twoRotatesAtOnceBothApplyAndEverySecretTheyAnsweredWorks(String kind) throws Exception {
    List<ApiKeys> replicas = replicas(kind);
    ApiKeys a = replicas.get(0);
    ApiKeys b = replicas.get(1);
    for (int trial = 0; trial < TRIALS; trial++) {
      ApiKeys.Issued issued = a.create(key());
      String id = issued.key().id();
      b.sync();

      List<Object> results = race(() -> a.rotate(id, OVERLAP), () -> b.rotate(id, OVERLAP));
      a.sync();
      b.sync();

      for (Object result : results) {
        ApiKeys.Issued rotated = (ApiKeys.Issued) result;
        for (ApiKeys replica : replicas) {
          assertThat(replica.authenticate(rotated.secret())).as("trial %d: a secret a rotate answered", trial)
              .isNotNull();
        }
      }
      assertThat(a.authenticate(issued.secret())).as("the original secret, within both overlaps").isNotNull();
    }
  }

  @Test
  void aSecondRotationKeepsTheFirstRotationsOverlap() {
    try (ApiKeys keys = new ApiKeys(new MemoryKeyStore(), clock)) {
      ApiKeys.Issued first = keys.create(key());
      String id = first.key().id();
      ApiKeys.Issued second = keys.rotate(id, OVERLAP);
      clock.advance(Duration.ofMinutes(10));

      ApiKeys.Issued third = keys.rotate(id, Duration.ofMinutes(5));

      ApiKeys.Match original = keys.authenticate(first.secret());
      assertThat(original).as("the first secret still has 50 of its 60 minutes").isNotNull();
      assertThat(original.previousUntil()).isEqualTo(clock.instant().plus(Duration.ofMinutes(50)));
      assertThat(keys.authenticate(second.secret()).previousUntil()).isEqualTo(clock.instant().plus(Duration.ofMinutes(5)));
      assertThat(keys.authenticate(third.secret()).previous()).isFalse();

      clock.advance(Duration.ofMinutes(51));
      ApiKeys.Issued fourth = keys.rotate(id, OVERLAP);
      assertThat(keys.authenticate(first.secret())).as("an overlap that ended is dropped at the next rotation").isNull();
      assertThat(keys.authenticate(fourth.secret())).isNotNull();
    }
  }
}
