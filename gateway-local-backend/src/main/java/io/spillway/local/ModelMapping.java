package io.spillway.local;

import io.spillway.config.LocalConfig;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which local model serves a requested one, from {@code local.models}: the entry for the requested
 * name; else the requested name itself when it already is one of the local models (a client that
 * asks for {@code llama3.2:3b} by name gets it); else {@code default}. Immutable.
 */
public final class ModelMapping {
  public static final String DEFAULT = "default";

  private final LocalConfig config;
  private final List<String> localModels;

  public ModelMapping(LocalConfig config) {
    this.config = config;
    this.localModels = List.copyOf(new LinkedHashSet<>(config.modelNames().values()));
  }

  /** The local model for {@code requested} (which may be null). */
  public String map(String requested) {
    if (requested != null && !config.modelNames().containsKey(requested) && localModels.contains(requested)) {
      return requested;
    }
    return config.mapModel(requested);
  }

  /** The local model that serves everything no entry names. */
  public String defaultModel() {
    return config.modelNames().get(DEFAULT);
  }

  /** Every distinct local model the mapping can answer with, {@code default} first. */
  public List<String> localModels() {
    List<String> out = new ArrayList<>();
    out.add(defaultModel());
    for (String model : localModels) {
      if (!out.contains(model)) {
        out.add(model);
      }
    }
    return out;
  }

  /** The names clients may ask for: the mapped names (without {@code default}) and the local models. */
  public Set<String> servedNames() {
    Set<String> names = new LinkedHashSet<>();
    for (Map.Entry<String, String> entry : config.modelNames().entrySet()) {
      if (!entry.getKey().equals(DEFAULT)) {
        names.add(entry.getKey());
      }
    }
    names.addAll(localModels());
    return names;
  }
}
