package io.spillway.quota.accounting;

import java.time.Duration;

/**
 * Durations as OpenAI writes them in {@code x-ratelimit-reset-*}: {@code 20ms}, {@code 6s},
 * {@code 6m0s}, {@code 1h2m3s}; days count as hours ({@code 487h0m0s}).
 */
public final class ResetDurations {
  private ResetDurations() {}

  public static String format(Duration duration) {
    if (duration.isNegative() || duration.isZero()) {
      return "0s";
    }
    long totalSeconds = duration.toSeconds();
    if (totalSeconds == 0) {
      return Math.max(1, duration.toMillis()) + "ms";
    }
    long hours = totalSeconds / 3600;
    long minutes = totalSeconds % 3600 / 60;
    long seconds = totalSeconds % 60;
    if (hours > 0) {
      return hours + "h" + minutes + "m" + seconds + "s";
    }
    if (minutes > 0) {
      return minutes + "m" + seconds + "s";
    }
    return seconds + "s";
  }
}
