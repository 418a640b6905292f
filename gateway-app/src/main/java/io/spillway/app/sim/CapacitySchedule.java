package io.spillway.app.sim;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * When the simulated cloud is "at capacity": healthy for {@code healthyFor}, then at capacity for
 * {@code atCapacityFor}, repeating from {@code start}. A zero {@code atCapacityFor} means never.
 */
public record CapacitySchedule(Instant start, Duration healthyFor, Duration atCapacityFor) {
  public CapacitySchedule {
    if (healthyFor.isNegative() || atCapacityFor.isNegative() || healthyFor.plus(atCapacityFor).isZero()) {
      throw new IllegalArgumentException("healthyFor and atCapacityFor must not be negative, nor both zero");
    }
  }

  public static CapacitySchedule startingNow(Clock clock, Duration healthyFor, Duration atCapacityFor) {
    return new CapacitySchedule(clock.instant(), healthyFor, atCapacityFor);
  }

  public boolean atCapacity(Instant now) {
    return !atCapacityFor.isZero() && positionInCycle(now).compareTo(healthyFor) >= 0;
  }

  /** When the state changes next. */
  public Instant nextChange(Instant now) {
    if (atCapacityFor.isZero()) {
      return null;
    }
    Duration position = positionInCycle(now);
    Duration untilChange = position.compareTo(healthyFor) < 0
        ? healthyFor.minus(position)
        : healthyFor.plus(atCapacityFor).minus(position);
    return now.plus(untilChange);
  }

  private Duration positionInCycle(Instant now) {
    long cycle = healthyFor.plus(atCapacityFor).toMillis();
    long elapsed = Math.max(0, Duration.between(start, now).toMillis());
    return Duration.ofMillis(elapsed % cycle);
  }
}
