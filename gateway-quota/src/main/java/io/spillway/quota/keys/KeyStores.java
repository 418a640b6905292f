package io.spillway.quota.keys;

import io.spillway.redis.RedisLink;
import java.nio.file.Path;
import java.time.Duration;

/** Opens the key store that goes with the {@code store} config value. */
public final class KeyStores {
  private KeyStores() {}

  /**
   * {@code memory}, {@code embedded:<dir>} ({@code <dir>/keys.mv.db}) or {@code redis://…}.
   *
   * @param redis the process's link to Redis for a {@code redis://} spec (else ignored)
   * @param timeout the longest one Redis call may take ({@code quota.storeTimeout})
   */
  public static KeyStore open(String spec, RedisLink redis, Duration timeout) {
    if (spec.equals("memory")) {
      return new MemoryKeyStore();
    }
    if (spec.startsWith("embedded:")) {
      return EmbeddedKeyStore.open(Path.of(spec.substring("embedded:".length())));
    }
    if (RedisLink.names(spec)) {
      if (redis == null) {
        throw new IllegalArgumentException("store '" + spec + "' needs the process's Redis link");
      }
      return new RedisKeyStore(redis, timeout);
    }
    throw new IllegalArgumentException("store '" + spec + "' is not embedded:<dir>, redis://host:port or memory");
  }
}
