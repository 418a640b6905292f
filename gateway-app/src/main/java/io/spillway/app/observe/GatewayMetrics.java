package io.spillway.app.observe;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.config.MetricsConfig;
import io.spillway.core.Version;
import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.time.Ticker;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Spillway's meters, in one place so their names and tags stay consistent. Owns the Prometheus
 * registry that {@code GET /metrics} scrapes; other components receive {@link #registry()} in their
 * constructors and register their own meters there (breaker state, pool usage, queue depth, ...).
 *
 * <p>Every timer is a Prometheus histogram (buckets from 1 ms to 10 min), so p50/p95/p99 are
 * computed in Prometheus with {@code histogram_quantile} and can be aggregated across replicas.
 *
 * <p>Tags are bounded by construction: route (enum), backend, tier (enum), model (capped by
 * {@code metrics.maxModelTags}, admitted only when configured or answered by the cloud, the rest
 * counted as {@code other}), outcome and status class. Never a
 * key, a team, a user or a raw path. Thread-safe.
 */
public final class GatewayMetrics {
  /** Meter names; Prometheus shows them with dots as underscores and units as suffixes. */
  public static final String REQUESTS = "spillway.requests";
  public static final String REQUEST_DURATION = "spillway.request.duration";
  public static final String GATEWAY_DURATION = "spillway.gateway.duration";
  public static final String UPSTREAM_DURATION = "spillway.upstream.duration";
  public static final String STREAM_FIRST_BYTE = "spillway.stream.first.byte";
  public static final String BACKEND_CALLS = "spillway.backend.calls";
  public static final String BACKEND_CALL_DURATION = "spillway.backend.call.duration";
  public static final String UPSTREAM_ERRORS = "spillway.upstream.errors";
  public static final String CAPACITY_ANSWERS = "spillway.capacity.answers";
  public static final String CAPACITY_RATE = "spillway.capacity.rate";
  public static final String TOKENS = "spillway.tokens";
  public static final String DEGRADED = "spillway.degraded";

  private final PrometheusMeterRegistry registry;
  private final MetricsConfig config;
  private final RequestSeries series;
  private final BoundedTagValues models;
  private final Set<String> configuredModels;
  private final BoundedTagValues steps = new BoundedTagValues(32);
  private final Map<MeterKey, Counter> counters = new ConcurrentHashMap<>();
  private final Map<MeterKey, Timer> timers = new ConcurrentHashMap<>();
  private volatile boolean jvmBound;

  public GatewayMetrics(MetricsConfig config, Clock clock) {
    this(config, Set.of(), clock);
  }

  /**
   * @param configuredModels model names the config mentions (local mappings, shaping's model
   *     rules): they may take a {@code model} tag slot before any backend answered them
   */
  public GatewayMetrics(MetricsConfig config, Set<String> configuredModels, Clock clock) {
    this.config = config;
    this.configuredModels = Set.copyOf(configuredModels);
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    this.series = new RequestSeries(clock, config.seriesWindow(), config.capacityWindow());
    this.models = new BoundedTagValues(config.maxModelTags());
    Gauge.builder("spillway.info", () -> 1).tag("version", Version.VERSION)
        .description("Always 1; the version is in the tag").register(registry);
    Gauge.builder(CAPACITY_RATE, this, m -> m.series.capacityRate(m.config.capacityWindow()))
        .description("Capacity answers / cloud answers over metrics.capacityWindow (the north-star number)")
        .register(registry);
    FunctionCounter.builder("spillway.blocking.handoffs", Blocking.class, unused -> Blocking.handOffs())
        .description("Times a request's work moved from an event loop to a virtual thread because it may block")
        .register(registry);
  }

  /**
   * Registers the JVM's own meters ({@code jvm_*}, {@code process_*}, {@code system_*}); once, and
   * before any scrape. They read the platform's management beans (about 100 classes and 75 ms of
   * CPU the first time), which nothing on the way to the first listen needs, so the gateway binds
   * them once its listener is up; every value is read at the scrape, so binding later shows the
   * same numbers.
   */
  public void bindJvmMeters() {
    if (jvmBound) {
      return;
    }
    synchronized (this) {
      if (!jvmBound) {
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        jvmBound = true;
      }
    }
  }

  /** The registry to hand to other components' constructors. */
  public PrometheusMeterRegistry registry() {
    return registry;
  }

  public RequestSeries series() {
    return series;
  }

  public MetricsConfig config() {
    return config;
  }

  /** The Prometheus text exposition of every meter. */
  public String scrape() {
    bindJvmMeters();
    return registry.scrape();
  }

  /** Wraps the terminal stage so the time spent upstream is measured apart from the gateway's own. */
  public Terminal meter(Terminal terminal, Ticker ticker) {
    return new MeteredTerminal(terminal, this, ticker);
  }

  /** Wraps a backend so each call to it is timed, classified and counted. */
  public Backend meter(Backend backend, CapacitySignal capacity, Ticker ticker) {
    return new MeteredBackend(backend, this, capacity, ticker);
  }

  /**
   * The {@code model} tag: a model takes one of the {@code metrics.maxModelTags} slots only if it
   * is configured or the cloud has answered it successfully ({@code answered}); until then, and once
   * the slots are taken, it is {@code other}. The local backend answers any name (unknown ones with
   * its default model), so its answers admit nothing.
   */
  String modelTag(String model, boolean answered) {
    return models.tag(model, answered || (model != null && configuredModels.contains(model)));
  }

  String stepTag(String step) {
    return steps.tag(step);
  }

  String backendTag(BackendKind backend) {
    return backend == null ? "none" : backend.tag();
  }

  void countRequest(String route, String backend, String tier, String model, String outcome, String statusClass) {
    counter(REQUESTS, "Requests answered, by route, backend, tier, model and outcome",
        "route", route, "backend", backend, "tier", tier, "model", model, "outcome", outcome, "status", statusClass)
        .increment();
  }

  void recordRequestDuration(String route, String backend, String tier, boolean stream, long nanos) {
    timer(REQUEST_DURATION, "Whole request, from the pipeline's start to the last byte",
        "route", route, "backend", backend, "tier", tier, "stream", Boolean.toString(stream))
        .record(nanos, TimeUnit.NANOSECONDS);
  }

  void recordGatewayDuration(String route, long nanos) {
    timer(GATEWAY_DURATION, "Time spent in Spillway itself: the request minus the upstream part",
        "route", route).record(nanos, TimeUnit.NANOSECONDS);
  }

  void recordUpstreamDuration(String route, String backend, long nanos) {
    timer(UPSTREAM_DURATION, "Time in the routing stage (admission wait, backend calls) until the answer began",
        "route", route, "backend", backend).record(nanos, TimeUnit.NANOSECONDS);
  }

  void recordFirstByte(String route, String backend, long nanos) {
    timer(STREAM_FIRST_BYTE, "Streams: from the request's start to the first event sent to the client",
        "route", route, "backend", backend).record(nanos, TimeUnit.NANOSECONDS);
  }

  void recordBackendCall(String backend, String statusClass, long nanos) {
    timer(BACKEND_CALL_DURATION, "One call to a backend, until its answer (headers, for a stream)",
        "backend", backend, "status", statusClass).record(nanos, TimeUnit.NANOSECONDS);
    counter(BACKEND_CALLS, "Calls to each backend by status class", "backend", backend, "status", statusClass)
        .increment();
  }

  void countUpstreamError(String backend, String errorClass) {
    counter(UPSTREAM_ERRORS, "Upstream failures by class: transport failures and HTTP error answers",
        "backend", backend, "class", errorClass).increment();
  }

  void countCapacityAnswer(String backend) {
    counter(CAPACITY_ANSWERS, "Upstream answers that said the model is at capacity", "backend", backend)
        .increment();
  }

  void countTokens(String tier, String backend, String kind, long tokens) {
    if (tokens > 0) {
      counter(TOKENS, "Tokens reported by the backends (prompt, completion)",
          "tier", tier, "backend", backend, "kind", kind).increment(tokens);
    }
  }

  void countDegraded(String step) {
    counter(DEGRADED, "Requests changed by a shaping step", "step", stepTag(step)).increment();
  }

  /**
   * The meter for a name and tag values, found in a map of its own: Micrometer's register path
   * builds an id and sorts its tags on every call, which per request added up. Tag values are
   * bounded (see the class comment), so these maps are too.
   */
  private Counter counter(String name, String description, String... tags) {
    return counters.computeIfAbsent(new MeterKey(name, tags),
        key -> Counter.builder(name).description(description).tags(tags).register(registry));
  }

  private Timer timer(String name, String description, String... tags) {
    return timers.computeIfAbsent(new MeterKey(name, tags), key -> Timer.builder(name)
        .description(description)
        .tags(tags)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofMillis(1))
        .maximumExpectedValue(Duration.ofMinutes(10))
        .register(registry));
  }

  /** A meter's name and its tags' keys and values, in the order given. */
  private record MeterKey(String name, List<String> tags) {
    MeterKey(String name, String... tags) {
      this(name, Arrays.asList(tags));
    }
  }
}
