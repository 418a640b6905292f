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
    ConfigProblems.Reporter at = ConfigProblems.at("keys[]");
    boolean plain = key != null && !key.isEmpty();
    boolean hashed = keyHash != null && !keyHash.isEmpty();
    boolean disabled = key != null && key.isEmpty() && !hashed;
    if (plain == hashed && !disabled) {
      at.problem("", "set exactly one of 'key' and 'keyHash'");
    }
    if (hashed && !keyHash.matches("sha256:[0-9a-f]{64}")) {
      at.problem("keyHash", "expected sha256:<64 lowercase hex digits> (see `spillway.jar hash-key`)");
    }
    if (team == null || team.isBlank()) {
      at.problem("team", "missing");
    }
    if (tier == null) {
      at.problem("tier", "missing (one of gold, silver, bronze)");
    } else if (TierMaps.exactly(tier) == null) {
      at.problem("tier", TierMaps.notATier(tier));
    }
    if (models != null && models.stream().anyMatch(m -> m == null || m.isBlank())) {
      at.problem("models", "a model name is empty");
    }
    models = models == null ? List.of() : models.stream().filter(m -> m != null).toList();
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
