package io.spillway.config;

import java.util.List;

/**
 * One gateway key: either {@code key} (plain, usually {@code ${ENV}}) or {@code keyHash}
 * ({@code sha256:<hex>}), the team and tier it names, and optionally the models it may use.
 *
 * @param models the models the key may ask for (and sees in {@code /v1/models}); empty for any
 */
public record KeyConfig(String key, String keyHash, String team, String tier, List<String> models) {
  public KeyConfig {
    models = models == null ? List.of() : List.copyOf(models);
  }

  public KeyConfig(String key, String keyHash, String team, String tier) {
    this(key, keyHash, team, tier, null);
  }

  /**
   * An entry whose {@code key} resolved to an empty string (typically {@code ${VAR:-}} with the
   * variable unset) and that has no hash: it admits nobody and is skipped with a warning.
   */
  public boolean disabled() {
    return key != null && key.isEmpty() && (keyHash == null || keyHash.isEmpty());
  }
}
