package io.spillway.app.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.spillway.routing.RouterListener;
import io.spillway.routing.capacity.Verdict;
import java.util.concurrent.TimeUnit;

/**
 * The router's meters, bound from outside as its {@link RouterListener}:
 * {@code spillway_router_attempt_duration_seconds{backend,outcome}},
 * {@code spillway_breaker_capacity_answers_total{rule,route}}, {@code spillway_failovers_total{reason,route}},
 * {@code spillway_router_fallbacks_total{cause}} and {@code spillway_router_unavailable_total} (shown
 * from the start, at 0). Thread-safe.
 */
public final class RouterMetrics implements RouterListener {
  private final MeterRegistry meters;
  private final Counter unavailable;

  public RouterMetrics(MeterRegistry meters) {
    this.meters = meters;
    this.unavailable = Counter.builder("spillway.router.unavailable")
        .description("Requests neither backend could serve (answered 503 with Retry-After)")
        .register(meters);
  }

  @Override
  public void onAttempt(String backend, Verdict verdict, long nanos) {
    Timer.builder("spillway.router.attempt.duration")
        .description("One backend call until its answer (a stream: until its first event), by backend and outcome")
        .tags("backend", backend, "outcome", verdict.outcome().tag())
        .register(meters)
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void onCapacityAnswer(String route, Verdict verdict) {
    Counter.builder("spillway.breaker.capacity.answers")
        .description("Capacity answers from the cloud, by cloud route and the classifier row that matched")
        .tags("rule", verdict.rule(), "route", route)
        .register(meters)
        .increment();
  }

  @Override
  public void onFailover(String route, Verdict verdict) {
    Counter.builder("spillway.failovers")
        .description("Requests moved on from a cloud route that could not serve them (to the next route or local)")
        .tags("reason", verdict.outcome().tag(), "route", route)
        .register(meters)
        .increment();
  }

  @Override
  public void onFallback(String cause) {
    Counter.builder("spillway.router.fallbacks")
        .description("Requests tried on the cloud because the local backend could not serve them, by cause")
        .tag("cause", cause)
        .register(meters)
        .increment();
  }

  @Override
  public void onUnavailable() {
    unavailable.increment();
  }
}
