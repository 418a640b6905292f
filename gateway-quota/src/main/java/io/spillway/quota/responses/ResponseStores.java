package io.spillway.quota.responses;

import io.spillway.config.GatewayConfig;
import io.spillway.config.Store;
import io.spillway.core.responses.ResponseStore;
import io.spillway.redis.RedisLink;
import java.time.Clock;
import java.util.Objects;

/** Opens the response store that goes with the {@code store} config value, or none. */
public final class ResponseStores {
  private ResponseStores() {}

  /**
   * The response store in {@code config.store()} (in memory, in {@code <dir>/responses.mv.db}, or
   * in Redis over the process's link {@code redis}); null when {@code responses.enabled} is false.
   */
  public static ResponseStore open(GatewayConfig config, RedisLink redis, Clock clock) {
    if (!config.responses().enabled()) {
      return null;
    }
    return switch (config.store()) {
      case Store.Memory memory -> MvResponseStore.inMemory(config.responses(), clock);
      case Store.Embedded embedded -> MvResponseStore.open(embedded.dir(), config.responses(), clock);
      case Store.Redis shared -> new RedisResponseStore(Objects.requireNonNull(redis, "the process's Redis link"),
          config.quota().storeTimeout(), config.responses(), clock);
    };
  }
}
