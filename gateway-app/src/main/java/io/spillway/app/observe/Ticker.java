package io.spillway.app.observe;

/** A monotonic nanosecond source for durations ({@code System::nanoTime}; tests pass a fake). */
@FunctionalInterface
public interface Ticker {
  long nanos();
}
