package io.spillway.config;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A size in bytes, written in config as {@code 8MiB}, {@code 512KiB}, {@code 64KB} or plain bytes. */
public record DataSize(long bytes) {
  private static final Pattern FORMAT = Pattern.compile("(\\d+)\\s*([a-zA-Z]*)");

  public DataSize {
    if (bytes < 0) {
      throw new IllegalArgumentException("size must not be negative");
    }
  }

  public static DataSize ofBytes(long bytes) {
    return new DataSize(bytes);
  }

  public static DataSize ofKibibytes(long kib) {
    return new DataSize(kib * 1024);
  }

  public static DataSize ofMebibytes(long mib) {
    return new DataSize(mib * 1024 * 1024);
  }

  public static DataSize parse(String text) {
    Matcher m = FORMAT.matcher(text.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException("'" + text + "' is not a size (examples: 8MiB, 512KiB, 1024)");
    }
    long n = Long.parseLong(m.group(1));
    long unit =
        switch (m.group(2).toLowerCase(Locale.ROOT)) {
          case "", "b" -> 1;
          case "kib", "k" -> 1024;
          case "kb" -> 1000;
          case "mib", "m" -> 1024 * 1024;
          case "mb" -> 1000 * 1000;
          case "gib", "g" -> 1024L * 1024 * 1024;
          case "gb" -> 1000L * 1000 * 1000;
          default ->
              throw new IllegalArgumentException(
                  "'" + text + "' has an unknown unit (use B, KiB, MiB, GiB, KB, MB or GB)");
        };
    return new DataSize(Math.multiplyExact(n, unit));
  }

  public int toIntBytes() {
    return (int) Math.min(Integer.MAX_VALUE, bytes);
  }

  @Override
  public String toString() {
    if (bytes > 0 && bytes % (1024L * 1024 * 1024) == 0) {
      return bytes / (1024L * 1024 * 1024) + "GiB";
    }
    if (bytes > 0 && bytes % (1024 * 1024) == 0) {
      return bytes / (1024 * 1024) + "MiB";
    }
    if (bytes > 0 && bytes % 1024 == 0) {
      return bytes / 1024 + "KiB";
    }
    return Long.toString(bytes);
  }
}
