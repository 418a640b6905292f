package io.spillway.shaping;

import io.spillway.config.ShapingConfig;
import java.util.Locale;

/** The degradation ladder, in order: each step is taken together with every step before it. */
public enum LadderStep {
  /** Trim oversized code context. */
  TRIM,
  /** Tighten sampling parameters and the output limit. */
  DOWNGRADE,
  /** Use a smaller model where the model-scenario table says so. */
  MODEL,
  /** Serve from the local backend. */
  LOCAL;

  /** The name used in config ({@code trim}, {@code downgrade}, {@code model}, {@code local}). */
  public String configName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The step a config value names. */
  public static LadderStep of(ShapingConfig.Step step) {
    return valueOf(step.name());
  }
}
