package io.spillway.quota.pool;

/**
 * Tokens one request consumed, as its backend reported them (or, when it reported none, as
 * estimated).
 */
public record TokenUsage(long input, long output) {
  public long total() {
    return input + output;
  }
}
