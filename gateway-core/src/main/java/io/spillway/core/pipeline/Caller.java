package io.spillway.core.pipeline;

import java.util.List;

/**
 * Who is calling, as resolved from a gateway key. {@code keyId} is a short, non-secret fingerprint
 * of the key, safe to log. {@code models} is the key's model allow-list ({@code models} of an
 * API-created key, {@code keys[].models} of a config key); empty allows every model.
 */
public record Caller(String team, Tier tier, String keyId, List<String> models) {
  public Caller {
    models = models == null ? List.of() : List.copyOf(models);
  }

  /** A caller whose key may use every model. */
  public Caller(String team, Tier tier, String keyId) {
    this(team, tier, keyId, List.of());
  }

  /** Whether the key may use {@code model}: always with an empty allow-list. */
  public boolean allows(String model) {
    return models.isEmpty() || models.contains(model);
  }
}
