package io.spillway.shaping.risk;

import io.spillway.core.fleet.FleetMode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.ShapingConfig;
import io.spillway.core.json.Json;
import io.spillway.core.risk.ReplicaRiskCounts;
import io.spillway.core.risk.RiskCounts;
import java.time.Clock;
import java.time.Instant;
import java.util.List;

/**
 * The capacity risk index: how likely the cloud is to start refusing soon, from what Spillway itself
 * sees. It is {@code growth weight × request growth + latency weight × latency increase + error
 * weight × error rate}, each part between 0 and 1:
 *
 * <ul>
 *   <li>request growth: requests in the last {@code growthWindow} against the one before it,
 *       {@code (last - previous) / max(previous, minRequests)};
 *   <li>latency increase: the mean latency over {@code window} above {@code latencyBaseline},
 *       relative to the baseline ({@code 2 × baseline} is 1);
 *   <li>error rate: the share of errors and capacity answers over {@code window}.
 * </ul>
 *
 * Latency and error rate count only once {@code minSamples} requests are in the window. When the
 * index goes above its threshold it stays {@linkplain #active() active} for the hold time after the
 * last time it was seen above.
 *
 * <p>Fed by the pipeline ({@link #record}) with every request's latency and outcome, which it hands
 * to its {@link RiskCounts}: this replica's own ({@link ReplicaRiskCounts}, the default) or the
 * fleet's, shared in Redis, so every replica computes the same index from everyone's requests. Time
 * comes from the injected clock. Thread-safe; every method is a short critical section in memory.
 */
public final class RiskIndex {
  private final ShapingConfig.RiskConfig config;
  private final Clock clock;
  private final RiskCounts counts;
  private long holdUntilMillis = Long.MIN_VALUE;

  /** An index over this replica's own requests. */
  public RiskIndex(ShapingConfig.RiskConfig config, Clock clock) {
    this(config, clock, new ReplicaRiskCounts(config.growthWindow(), config.window()));
  }

  /** An index over the counts {@code counts} keeps (this replica's, or the fleet's). */
  public RiskIndex(ShapingConfig.RiskConfig config, Clock clock, RiskCounts counts) {
    this.config = config;
    this.clock = clock;
    this.counts = counts;
  }

  /** Where the counts come from now. */
  public FleetMode mode() {
    return counts.mode();
  }

  /**
   * Registers the gauges {@code spillway_risk_index} and {@code spillway_risk_mode{mode}} (1 for whose
   * counts the index sees now: {@code local} without Redis; {@code fleet} or {@code local-fallback}
   * with it, the other 0).
   */
  public RiskIndex bindTo(MeterRegistry registry) {
    Gauge.builder("spillway.risk.index", this, RiskIndex::value)
        .description("Capacity risk index: request growth, latency increase and error rate, weighted")
        .register(registry);
    List<FleetMode> modes = counts.mode() == FleetMode.REPLICA
        ? List.of(FleetMode.REPLICA)
        : List.of(FleetMode.FLEET, FleetMode.REPLICA_FALLBACK);
    for (FleetMode mode : modes) {
      Gauge.builder("spillway.risk.mode", this, index -> index.mode() == mode ? 1 : 0)
          .description("Whose requests the risk index counts: 1 for the mode in force (local, fleet, local-fallback)")
          .tag("mode", mode.tag())
          .register(registry);
    }
    return this;
  }

  /** Records one request: how long the upstream took and whether it failed or answered "at capacity". */
  public void record(long latencyMillis, boolean error) {
    counts.answered(clock.millis(), latencyMillis, error);
  }

  /**
   * Records a request the gateway refused itself (a rate limit, an exhausted pool): it counts toward
   * request growth, but says nothing about the upstream's latency or errors.
   */
  public void recordRefused() {
    counts.refused(clock.millis());
  }

  /** The index now, between 0 and the sum of the weights. */
  public double value() {
    return compute().index();
  }

  /** Whether the index is above its threshold now, or was within the hold time. */
  public boolean active() {
    if (!config.enabled()) {
      return false;
    }
    Parts parts = compute();
    return parts.index() > config.threshold() || clock.millis() < holdUntil();
  }

  private synchronized long holdUntil() {
    return holdUntilMillis;
  }

  private synchronized Parts compute() {
    long now = clock.millis();
    RiskCounts.Totals totals = counts.totals(now);
    double last = totals.lastWindow();
    double previous = totals.previousWindow();
    double growthPart = clamp((last - previous) / Math.max(previous, config.minRequests()));
    double requests = totals.recent();
    double errors = totals.recentErrors();
    double latencyPart = 0;
    double errorPart = 0;
    double meanLatency = 0;
    if (requests >= config.minSamples()) {
      meanLatency = totals.recentLatencyMillis() / requests;
      double baseline = config.latencyBaseline().toMillis();
      latencyPart = clamp((meanLatency - baseline) / baseline);
      errorPart = clamp(errors / requests);
    }
    ShapingConfig.WeightsConfig w = config.weights();
    double index = w.growth() * growthPart + w.latency() * latencyPart + w.errors() * errorPart;
    if (config.enabled() && index > config.threshold()) {
      holdUntilMillis = Math.max(holdUntilMillis, now + config.hold().toMillis());
    }
    return new Parts(index, growthPart, latencyPart, errorPart, Math.round(last), Math.round(previous),
        Math.round(requests), Math.round(errors), meanLatency);
  }

  /** The index and its parts as JSON, for {@code /admin/status}. */
  public ObjectNode snapshot() {
    Parts parts = compute();
    long holdUntil = holdUntil();
    long now = clock.millis();
    ObjectNode node = Json.object();
    node.put("index", round(parts.index()));
    node.put("threshold", config.threshold());
    node.put("active", config.enabled() && (parts.index() > config.threshold() || now < holdUntil));
    node.put("holdUntil", holdUntil > now ? Instant.ofEpochMilli(holdUntil).toString() : null);
    ObjectNode components = node.putObject("components");
    components.put("growth", round(parts.growth()));
    components.put("latency", round(parts.latency()));
    components.put("errors", round(parts.errors()));
    ObjectNode weights = node.putObject("weights");
    weights.put("growth", config.weights().growth());
    weights.put("latency", config.weights().latency());
    weights.put("errors", config.weights().errors());
    ObjectNode requests = node.putObject("requests");
    requests.put("lastWindow", parts.lastWindow());
    requests.put("previousWindow", parts.previousWindow());
    requests.put("recent", parts.recent());
    requests.put("recentErrors", parts.recentErrors());
    requests.put("meanLatencyMs", Math.round(parts.meanLatency()));
    counts.describe(node.putObject("counts"));
    return node;
  }

  private static double clamp(double value) {
    return value < 0 || Double.isNaN(value) ? 0 : Math.min(1, value);
  }

  private static double round(double value) {
    return Math.round(value * 1000) / 1000.0;
  }

  private record Parts(double index, double growth, double latency, double errors, long lastWindow,
      long previousWindow, long recent, long recentErrors, double meanLatency) {}
}
