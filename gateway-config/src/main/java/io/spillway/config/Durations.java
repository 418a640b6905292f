package io.spillway.config;

import io.spillway.core.time.DurationText;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as written in config: {@code 500ms}, {@code 90s}, {@code 5m}, {@code 1h}, {@code 2d}, or {@code 1m30s}. */
public final class Durations {
  private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h|d)");

  private Durations() {}

  public static Duration parse(String text) {
    String value = text.trim();
    if (value.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    if (value.startsWith("P") || value.startsWith("p")) {
      return Duration.parse(value);
    }
    Matcher m = PART.matcher(value);
    Duration total = Duration.ZERO;
    int end = 0;
    while (m.find()) {
      if (m.start() != end) {
        break;
      }
      long n = Long.parseLong(m.group(1));
      total =
          total.plus(
              switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
              });
      end = m.end();
    }
    if (end != value.length()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration (examples: 500ms, 90s, 5m, 1h, 1m30s)");
    }
    return total;
  }

  /** The way the config file writes {@code d} ({@link DurationText#format}). */
  public static String format(Duration d) {
    return DurationText.format(d);
  }
}
