package io.spillway.routing.capacity;

import io.spillway.core.http.Headers;
import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.regex.Pattern;

/**
 * Reads how long an upstream asked callers to wait: {@code retry-after-ms} (OpenAI sends it beside
 * the standard header), else {@code Retry-After} as delay-seconds or as an HTTP-date.
 */
final class RetryAfter {
  private static final Pattern NUMBER = Pattern.compile("\\d{1,12}(\\.\\d{1,9})?");
  /** Longer waits than a year are read as a year; the breaker caps them far lower anyway. */
  private static final long MAX_MILLIS = Duration.ofDays(365).toMillis();

  private RetryAfter() {}

  /** The wait the headers ask for, never negative; null when they ask for none or cannot be read. */
  static Duration from(Headers headers, Clock clock) {
    if (headers == null) {
      return null;
    }
    String millis = headers.get("retry-after-ms");
    if (millis != null) {
      Duration parsed = parseNumber(millis.trim(), true);
      if (parsed != null) {
        return parsed;
      }
    }
    String value = headers.get("retry-after");
    if (value == null || value.isBlank()) {
      return null;
    }
    value = value.trim();
    Duration seconds = parseNumber(value, false);
    if (seconds != null) {
      return seconds;
    }
    try {
      ZonedDateTime at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME);
      Duration wait = Duration.between(clock.instant(), at.toInstant());
      return wait.isNegative() ? Duration.ZERO : wait;
    } catch (DateTimeParseException e) {
      return null;
    }
  }

  private static Duration parseNumber(String value, boolean millis) {
    if (!NUMBER.matcher(value).matches()) {
      return null;
    }
    double number = Double.parseDouble(value);
    double ms = Math.ceil(millis ? number : number * 1000);
    return ms > MAX_MILLIS ? Duration.ofMillis(MAX_MILLIS) : Duration.ofMillis((long) ms);
  }
}
