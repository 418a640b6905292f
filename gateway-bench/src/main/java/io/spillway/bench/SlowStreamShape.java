package io.spillway.bench;

import java.time.Duration;

/**
 * What {@link SlowUpstream} streams for each request: {@code events} content chunks, one every
 * {@code interval}, the first at once.
 */
public record SlowStreamShape(int events, Duration interval) {
  public SlowStreamShape {
    if (events < 0 || interval.isNegative()) {
      throw new IllegalArgumentException("events and interval must not be negative");
    }
  }
}
