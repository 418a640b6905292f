package io.spillway.local.context;

import io.spillway.config.LocalConfig;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The context window of each local model: {@code local.models.<name>.contextTokens} when configured,
 * else what the server said ({@link #learned}), else {@code local.context.defaultTokens}. What the
 * server says is asked for off the request path (by the readiness schedule) and remembered for the
 * life of the process. Thread-safe.
 */
public final class ContextWindows {
  private final LocalConfig config;
  private final Map<String, Integer> learned = new ConcurrentHashMap<>();

  public ContextWindows(LocalConfig config) {
    this.config = config;
  }

  /** The window to fit requests for {@code localModel} to. */
  public int of(String localModel) {
    Integer configured = config.contextTokens(localModel);
    if (configured != null) {
      return configured;
    }
    Integer known = learned.get(localModel);
    return known != null ? known : config.context().defaultTokens();
  }

  /** Whether the window of {@code localModel} is configured or already learned (nothing to ask). */
  public boolean known(String localModel) {
    return config.contextTokens(localModel) != null || learned.containsKey(localModel);
  }

  /** Records what the server said about {@code localModel}'s window. */
  public void learned(String localModel, OptionalInt window) {
    if (window.isPresent() && window.getAsInt() > 0) {
      learned.put(localModel, window.getAsInt());
    }
  }

  /** Where the window of {@code localModel} comes from: {@code config}, {@code server} or {@code default}. */
  public String source(String localModel) {
    if (config.contextTokens(localModel) != null) {
      return "config";
    }
    return learned.containsKey(localModel) ? "server" : "default";
  }
}
