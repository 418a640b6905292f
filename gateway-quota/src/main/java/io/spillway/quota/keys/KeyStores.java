package io.spillway.quota.keys;

import io.spillway.config.Store;
import io.spillway.redis.RedisLink;
import java.time.Duration;
import java.util.Objects;

/** Opens the key store that goes with the {@code store} config value. */
public final class KeyStores {
  private KeyStores() {}

  /**
   * The key store in {@code store}: in memory, in {@code <dir>/keys.mv.db}, or in Redis.
   *
   * @param redis the process's link to Redis when {@code store} is Redis (else ignored)
   * @param timeout the longest one Redis call may take ({@code quota.storeTimeout})
   */
  public static KeyStore open(Store store, RedisLink redis, Duration timeout) {
    return switch (store) {
      case Store.Memory memory -> new MemoryKeyStore();
      case Store.Embedded embedded -> EmbeddedKeyStore.open(embedded.dir());
      case Store.Redis shared -> new RedisKeyStore(Objects.requireNonNull(redis, "the process's Redis link"), timeout);
    };
  }
}
