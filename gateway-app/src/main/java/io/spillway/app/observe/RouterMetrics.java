package io.spillway.app.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.routing.RouterListener;
import io.spillway.routing.capacity.Verdict;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The router's meters, bound from outside as its {@link RouterListener}:
 * {@code spillway_router_attempt_duration_seconds{backend,outcome}},
 * {@code spillway_breaker_capacity_answers_total{rule,route}}, {@code spillway_failovers_total{reason,route}},
 * {@code spillway_router_fallbacks_total{cause}} and {@code spillway_router_unavailable_total} (shown
 * from the start, at 0). Each meter is built once, on its first event, and looked up by its tags
 * after that (every tag value is bounded: backend and route names, outcomes, classifier rules,
 * causes). Thread-safe.
 */
public final class RouterMetrics implements RouterListener {
  private final MeterRegistry meters;
  private final Counter unavailable;
  private final Map<List<String>, Timer> attempts = new ConcurrentHashMap<>();
  private final Map<List<String>, Counter> counters = new ConcurrentHashMap<>();

  public RouterMetrics(MeterRegistry meters) {
    this.meters = meters;
    this.unavailable = Counter.builder("spillway.router.unavailable")
        .description("Requests neither backend could serve (answered 503 with Retry-After)")
        .register(meters);
  }

  @Override
  public void onAttempt(BackendKind backend, Verdict verdict, long nanos) {
    attempts.computeIfAbsent(List.of(backend.tag(), verdict.outcome().tag()), key -> Timer
            .builder("spillway.router.attempt.duration")
            .description("One backend call until its answer (a stream: until its first event), by backend and outcome")
            .tags("backend", key.get(0), "outcome", key.get(1))
            .register(meters))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  @Override
  public void onCapacityAnswer(String route, Verdict verdict) {
    count("spillway.breaker.capacity.answers",
        "Capacity answers from the cloud, by cloud route and the classifier row that matched",
        "rule", verdict.rule(), "route", route);
  }

  @Override
  public void onFailover(String route, Verdict verdict) {
    count("spillway.failovers",
        "Requests moved on from a cloud route that could not serve them (to the next route or local)",
        "reason", verdict.outcome().tag(), "route", route);
  }

  @Override
  public void onFallback(String cause) {
    count("spillway.router.fallbacks",
        "Requests tried on the cloud because the local backend could not serve them, by cause", "cause", cause);
  }

  @Override
  public void onUnavailable() {
    unavailable.increment();
  }

  /** Adds one to the counter {@code name} with {@code tags} (name/value pairs). */
  private void count(String name, String description, String... tags) {
    List<String> key = new ArrayList<>(tags.length + 1);
    key.add(name);
    key.addAll(Arrays.asList(tags));
    counters.computeIfAbsent(key, k -> Counter.builder(name).description(description).tags(tags).register(meters))
        .increment();
  }
}
