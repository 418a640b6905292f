package io.spillway.core.time;

import java.time.Duration;

/** A duration written the way the config file writes it: {@code 500ms}, {@code 90s}, {@code 5m}, {@code 1h}, {@code 2d}. */
public final class DurationText {
  private DurationText() {}

  public static String format(Duration d) {
    if (d.isZero()) {
      return "0s";
    }
    long ms = d.toMillis();
    if (ms % 86_400_000 == 0) {
      return ms / 86_400_000 + "d";
    }
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1000 == 0) {
      return ms / 1000 + "s";
    }
    return ms + "ms";
  }
}
