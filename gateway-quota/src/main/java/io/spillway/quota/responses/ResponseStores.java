package io.spillway.quota.responses;

import io.spillway.config.GatewayConfig;
import io.spillway.core.responses.ResponseStore;
import io.spillway.redis.RedisLink;
import java.nio.file.Path;
import java.time.Clock;

/** Opens the response store that goes with the {@code store} config value, or none. */
public final class ResponseStores {
  private ResponseStores() {}

  /**
   * The store of {@code config.store()} ({@code memory}, {@code embedded:<dir>} →
   * {@code <dir>/responses.mv.db}, {@code redis://…} over the process's link {@code redis});
   * null when {@code responses.enabled} is false.
   */
  public static ResponseStore open(GatewayConfig config, RedisLink redis, Clock clock) {
    if (!config.responses().enabled()) {
      return null;
    }
    String spec = config.store();
    if (spec.equals("memory")) {
      return MvResponseStore.inMemory(config.responses(), clock);
    }
    if (spec.startsWith("embedded:")) {
      return MvResponseStore.open(Path.of(spec.substring("embedded:".length())), config.responses(), clock);
    }
    if (RedisLink.names(spec)) {
      if (redis == null) {
        throw new IllegalArgumentException("store '" + spec + "' needs the process's Redis link");
      }
      return new RedisResponseStore(redis, config.quota().storeTimeout(), config.responses(), clock);
    }
    throw new IllegalArgumentException("store '" + spec + "' is not embedded:<dir>, redis://host:port or memory");
  }
}
