package io.spillway.core.config;

/**
 * Request shaping under pressure.
 *
 * @param degrade {@code never}, {@code pressure} (when the breaker is open, a pool is past its soft
 *     band, or the risk index is high) or {@code always}
 */
public record ShapingConfig(String degrade) {
  public static final ShapingConfig DEFAULTS = new ShapingConfig(null);

  public ShapingConfig {
    degrade = degrade != null ? degrade : "pressure";
  }
}
