package io.spillway.config;

import java.time.Duration;

/**
 * Prometheus metrics at {@code GET /metrics}, and the in-memory series behind the dashboard.
 *
 * @param capacityWindow the window of the capacity rate (capacity answers / cloud answers)
 * @param seriesWindow how much per-minute history {@code /admin/series} and the dashboard keep
 * @param maxModelTags distinct {@code model} tag values; models past this are counted as {@code other}
 */
public record MetricsConfig(
    Boolean enabled,
    Duration capacityWindow,
    Duration seriesWindow,
    Integer maxModelTags) {

  public static final MetricsConfig DEFAULTS = new MetricsConfig(null, null, null, null);

  public MetricsConfig {
    enabled = enabled != null ? enabled : true;
    capacityWindow = capacityWindow != null ? capacityWindow : Duration.ofMinutes(5);
    seriesWindow = seriesWindow != null ? seriesWindow : Duration.ofHours(1);
    maxModelTags = maxModelTags != null ? maxModelTags : 30;
    ConfigProblems.Reporter at = ConfigProblems.at("metrics");
    if (capacityWindow.toMinutes() < 1 || capacityWindow.compareTo(seriesWindow) > 0) {
      at.problem("capacityWindow", "must be at least 1m and at most " + at.path("seriesWindow"));
    }
    if (seriesWindow.toMinutes() < 1 || seriesWindow.toHours() > 24) {
      at.problem("seriesWindow", "must be between 1m and 24h");
    }
    at.atLeast("maxModelTags", maxModelTags, 1);
  }
}
