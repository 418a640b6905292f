package io.spillway.config;

/**
 * One gateway key: either {@code key} (plain, usually {@code ${ENV}}) or {@code keyHash}
 * ({@code sha256:<hex>}), and the team and tier it names.
 */
public record KeyConfig(String key, String keyHash, String team, String tier) {
  /**
   * An entry whose {@code key} resolved to an empty string (typically {@code ${VAR:-}} with the
   * variable unset) and that has no hash: it admits nobody and is skipped with a warning.
   */
  public boolean disabled() {
    return key != null && key.isEmpty() && (keyHash == null || keyHash.isEmpty());
  }
}
