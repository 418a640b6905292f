package io.spillway.quota.responses;

import io.spillway.config.GatewayConfig;
import io.spillway.core.responses.ResponseStore;
import java.nio.file.Path;
import java.time.Clock;

/** Opens the response store that goes with the {@code store} config value, or none. */
public final class ResponseStores {
  private ResponseStores() {}

  /**
   * The store of {@code config.store()} ({@code memory}, {@code embedded:<dir>} →
   * {@code <dir>/responses.mv.db}, {@code redis://…}); null when {@code responses.enabled} is false.
   */
  public static ResponseStore open(GatewayConfig config, Clock clock) {
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
    if (spec.startsWith("redis://") || spec.startsWith("rediss://")) {
      return new RedisResponseStore(spec, config.quota().storeTimeout(), config.responses(), clock);
    }
    throw new IllegalArgumentException("store '" + spec + "' is not embedded:<dir>, redis://host:port or memory");
  }
}
