package io.spillway.core.tokens;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The one rule a token count a backend reports must pass before Spillway believes it, whether it is
 * charged (quota accounting) or only shown (access log, metrics, traces), buffered or streamed: a
 * non-negative JSON integer of at most {@code quota.maxReportedTokens}. A count sent as a string, a
 * fraction ({@code 4e18} included), a negative number or one past the bound is refused.
 */
public final class ReportedCount {
  private ReportedCount() {}

  /**
   * Why {@code count} is not a sane token count: {@code string}, {@code fractional},
   * {@code not_a_number}, {@code too_large} or {@code negative}; null when it is one.
   *
   * @param count a present, non-null JSON value
   */
  public static String refusal(JsonNode count, long max) {
    if (count.isTextual()) {
      return "string";
    }
    if (count.isFloatingPointNumber()) {
      return "fractional";
    }
    if (!count.isIntegralNumber()) {
      return "not_a_number";
    }
    if (!count.canConvertToLong() || count.longValue() > max) {
      return "too_large";
    }
    if (count.longValue() < 0) {
      return "negative";
    }
    return null;
  }

  /** Whether {@code value} holds a count at all (present and not JSON null). */
  public static boolean present(JsonNode value) {
    return value != null && !value.isNull();
  }
}
