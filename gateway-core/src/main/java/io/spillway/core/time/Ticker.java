package io.spillway.core.time;

/**
 * The source of durations: a monotonic count of nanoseconds from an arbitrary origin, read twice and
 * subtracted. Wall time (timestamps, month boundaries, expiries) comes from the injected
 * {@link java.time.Clock} instead; a duration never does, as the wall clock may jump.
 *
 * <p>Injected like the clock, from the wiring ({@code Gateway}) into every part that times something;
 * production passes {@link #system()}, tests a fake that moves only when told (core's test fixture
 * {@code FakeClock} is both a clock and a ticker, so one {@code advance} moves both).
 */
@FunctionalInterface
public interface Ticker {
  /** Nanoseconds since an arbitrary origin; only differences between two reads mean anything. */
  long read();

  /** The JVM's monotonic clock, {@link System#nanoTime()}. */
  static Ticker system() {
    return System::nanoTime;
  }
}
