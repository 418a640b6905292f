package io.spillway.quota.keys;

import java.nio.file.Path;
import java.time.Duration;

/** Opens the key store that goes with the {@code store} config value. */
public final class KeyStores {
  private KeyStores() {}

  /**
   * {@code memory}, {@code embedded:<dir>} ({@code <dir>/keys.mv.db}) or {@code redis://…}.
   *
   * @param timeout the longest one Redis call may take ({@code quota.storeTimeout})
   */
  public static KeyStore open(String spec, Duration timeout) {
    if (spec.equals("memory")) {
      return new MemoryKeyStore();
    }
    if (spec.startsWith("embedded:")) {
      return EmbeddedKeyStore.open(Path.of(spec.substring("embedded:".length())));
    }
    if (spec.startsWith("redis://") || spec.startsWith("rediss://")) {
      return new RedisKeyStore(spec, timeout);
    }
    throw new IllegalArgumentException("store '" + spec + "' is not embedded:<dir>, redis://host:port or memory");
  }
}
