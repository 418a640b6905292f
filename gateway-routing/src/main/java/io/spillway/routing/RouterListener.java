package io.spillway.routing;

import io.spillway.core.pipeline.BackendKind;
import io.spillway.routing.capacity.Verdict;

/**
 * Told what the {@link Router} did with a request, so meters (the app's {@code RouterMetrics}) and
 * anything else are bound from outside instead of built on the hot path. Called on the request's
 * thread right after the event; must be quick and must not block or throw. Every method does nothing
 * by default; {@link #NONE} is the listener that ignores everything.
 */
public interface RouterListener {
  RouterListener NONE = new RouterListener() {};

  /**
   * One call to {@code backend} ended, {@code nanos} (from the router's ticker) after it started: its
   * answer, or for a stream its first event or the failure before it, as {@code verdict} judged it.
   */
  default void onAttempt(BackendKind backend, Verdict verdict, long nanos) {}

  /** The cloud route {@code route} gave a capacity answer (whatever the breaker then made of it). */
  default void onCapacityAnswer(String route, Verdict verdict) {}

  /** The request moves on from the cloud route {@code route}, which could not serve it, to the next route or local. */
  default void onFailover(String route, Verdict verdict) {}

  /**
   * The request went local first, local could not serve it ({@code cause}: {@code local_disabled},
   * {@code local_not_ready}, ...), and the cloud routes it went past are tried.
   */
  default void onFallback(String cause) {}

  /** Neither backend could serve the request: its client gets 503 with {@code Retry-After}. */
  default void onUnavailable() {}
}
