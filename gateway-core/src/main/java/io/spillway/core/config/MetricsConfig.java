package io.spillway.core.config;

/** Prometheus metrics at {@code GET /metrics}. */
public record MetricsConfig(Boolean enabled) {
  public static final MetricsConfig DEFAULTS = new MetricsConfig(null);

  public MetricsConfig {
    enabled = enabled != null ? enabled : true;
  }
}
