package io.spillway.routing.breaker;

/**
 * Told what happens in a {@link Breaker}: the state machine emits, and whoever cares binds from
 * outside (the router warms the local backend; the app's {@code BreakerMetrics} keeps the meters).
 * Called on the thread that caused the event, right after it happened; must be quick and must not
 * block or throw.
 */
public interface BreakerListener {
  /** The first capacity answer of a streak arrived while closed: traffic may soon move local. */
  default void onStreakStarted(String route) {}

  /**
   * The breaker of {@code route} moved from {@code from} to {@code to}. A replica's own breaker tells
   * each of its transitions once; the fleet's breaker tells every change of the shared state this
   * replica sees (so each replica tells it once), and its local fallback tells its own while it
   * decides. {@code from → to} is usually a named {@link Breaker.Transition}, but a replica that
   * missed a step of the fleet's breaker may see a jump (open → closed).
   */
  default void onTransition(String route, Breaker.State from, Breaker.State to, String reason) {}
}
