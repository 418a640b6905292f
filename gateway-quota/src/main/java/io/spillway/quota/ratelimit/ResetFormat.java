package io.spillway.quota.ratelimit;

import java.time.Duration;

/**
 * Durations as OpenAI writes them in {@code x-ratelimit-reset-*}: Go's duration format, to the
 * millisecond ({@code 250ms}, {@code 1.2s}, {@code 6m0s}, {@code 1h0m0s}).
 */
public final class ResetFormat {
  private ResetFormat() {}

  public static String format(Duration duration) {
    long millis = Math.max(0, duration.toMillis() + (duration.toNanosPart() % 1_000_000 > 0 ? 1 : 0));
    if (millis == 0) {
      return "0s";
    }
    if (millis < 1000) {
      return millis + "ms";
    }
    long hours = millis / 3_600_000;
    long minutes = millis / 60_000 % 60;
    long seconds = millis / 1000 % 60;
    long fraction = millis % 1000;
    StringBuilder out = new StringBuilder();
    if (hours > 0) {
      out.append(hours).append('h');
    }
    if (hours > 0 || minutes > 0) {
      out.append(minutes).append('m');
    }
    out.append(seconds);
    if (fraction > 0) {
      out.append('.').append(fraction / 100); // milliseconds as up to three decimals, no trailing zeros
      if (fraction % 100 > 0) {
        out.append(fraction / 10 % 10);
        if (fraction % 10 > 0) {
          out.append(fraction % 10);
        }
      }
    }
    return out.append('s').toString();
  }
}
