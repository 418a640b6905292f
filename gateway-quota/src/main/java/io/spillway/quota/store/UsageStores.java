package io.spillway.quota.store;

import io.spillway.config.GatewayConfig;
import io.spillway.config.QuotaConfig;
import io.spillway.config.Store;
import io.spillway.redis.RedisLink;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import org.h2.mvstore.MVStore;

/** Opens the usage store of the {@code store} config value. */
public final class UsageStores {
  private UsageStores() {}

  /**
   * Loads the embedded store's engine (H2's MVStore) by writing to a throw-away in-memory store: a
   * start-up warm-up, run on a second thread while the gateway is being built, so that opening the
   * key store and the usage store on the main thread finds most of its classes loaded. Nothing is
   * written to disk or kept.
   */
  public static void warmUp() {
    MVStore store = new MVStore.Builder().autoCommitDisabled().open();
    try {
      store.<String, Long>openMap("warm-up").put("pool|gold", 1L);
      store.commit();
    } finally {
      store.close();
    }
  }

  /**
   * Opens the store of {@code config.store()}, holding reservations no longer than {@link #holdTimeout}.
   *
   * @param redis the process's link to Redis when {@code config.store()} names one, else null
   */
  public static UsageStore open(GatewayConfig config, RedisLink redis, Clock clock) {
    return open(config.store(), redis, config.quota(), holdTimeout(config), clock);
  }

  /**
   * The longest a request can hold a reservation: the longest stream, plus the upstream timeout,
   * plus the longest admission wait. A shared store frees holds older than this, which only a
   * replica that died mid-request leaves behind.
   */
  public static Duration holdTimeout(GatewayConfig config) {
    Duration longestWait = config.quota().tiers().values().stream()
        .map(QuotaConfig.TierConfig::maxWait).max(Duration::compareTo).orElseThrow();
    return config.server().streamTimeLimit().plus(config.cloud().timeout()).plus(longestWait);
  }

  /**
   * Opens the usage store in {@code store}: in memory, in {@code <dir>/usage.mv.db}, or in Redis.
   *
   * @param redis the process's link to Redis when {@code store} is Redis (else ignored)
   * @param holdTimeout how long a reservation may live in a shared store before it is presumed
   *     abandoned by a replica that died; longer than any request may run
   */
  public static UsageStore open(Store store, RedisLink redis, QuotaConfig quota, Duration holdTimeout, Clock clock) {
    return switch (store) {
      case Store.Memory memory -> new MemoryUsageStore();
      case Store.Embedded embedded -> EmbeddedUsageStore.open(embedded.dir(), quota.flushInterval(), clock);
      case Store.Redis shared -> new RedisUsageStore(Objects.requireNonNull(redis, "the process's Redis link"),
          quota.storeTimeout(), quota.flushInterval(), holdTimeout, quota.failClosed(), clock);
    };
  }

}
