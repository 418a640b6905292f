package io.spillway.redis;

import java.time.Duration;
import java.time.Instant;

/**
 * Whether one owner currently sees Redis as away, and since when: the one place the "log once when
 * it goes, once when it is back" rule lives. {@link #begin} and {@link #end} answer whether this call
 * changed the state, so exactly one caller logs each transition.
 *
 * <p>Thread-safe.
 */
public final class RedisOutage {
  private boolean away;
  private Instant since;
  private String cause;

  /** Starts away (not connected yet) or reachable. */
  public RedisOutage(boolean away, Instant now) {
    this.away = away;
    this.since = now;
  }

  /** Redis did not answer at {@code now}; true when it was reachable until then. */
  public synchronized boolean begin(Instant now, Throwable why) {
    cause = String.valueOf(why);
    if (away) {
      return false;
    }
    away = true;
    since = now;
    return true;
  }

  /** Redis answered at {@code now}: how long it was away, or null when it was not. */
  public synchronized Duration end(Instant now) {
    if (!away) {
      return null;
    }
    away = false;
    cause = null;
    return Duration.between(since, now);
  }

  public synchronized boolean away() {
    return away;
  }

  /** When the current outage began (or, while reachable, when the last one ended or this began). */
  public synchronized Instant since() {
    return since;
  }

  /** What the last failure was, while away; null while reachable. */
  public synchronized String cause() {
    return cause;
  }
}
