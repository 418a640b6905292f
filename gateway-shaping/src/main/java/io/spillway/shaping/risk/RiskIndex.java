package io.spillway.shaping.risk;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.spillway.config.ShapingConfig;
import io.spillway.core.json.Json;
import java.time.Clock;
import java.time.Instant;

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
 * <p>Fed by the pipeline ({@link #record}) with every request's latency and outcome. Time comes from
 * the injected clock. Thread-safe; every method is a short critical section over fixed-size arrays.
 */
public final class RiskIndex {
  /** Buckets per window: the resolution of the sliding windows. */
  private static final int BUCKETS = 60;

  private final ShapingConfig.RiskConfig config;
  private final Clock clock;
  private final Window growth;
  private final Window recent;
  private long holdUntilMillis = Long.MIN_VALUE;

  public RiskIndex(ShapingConfig.RiskConfig config, Clock clock) {
    this.config = config;
    this.clock = clock;
    // Two growth windows back to back: the last one and the one before it.
    this.growth = new Window(Math.max(1, config.growthWindow().toMillis() / BUCKETS), 2 * BUCKETS + 1);
    this.recent = new Window(Math.max(1, config.window().toMillis() / BUCKETS), BUCKETS + 1);
  }

  /** Registers the gauge {@code spillway_risk_index}. */
  public RiskIndex bindTo(MeterRegistry registry) {
    Gauge.builder("spillway.risk.index", this, RiskIndex::value)
        .description("Capacity risk index: request growth, latency increase and error rate, weighted")
        .register(registry);
    return this;
  }

  /** Records one request: how long the upstream took and whether it failed or answered "at capacity". */
  public synchronized void record(long latencyMillis, boolean error) {
    long now = clock.millis();
    growth.add(now, 0, false);
    recent.add(now, Math.max(0, latencyMillis), error);
  }

  /**
   * Records a request the gateway refused itself (a rate limit, an exhausted pool): it counts toward
   * request growth, but says nothing about the upstream's latency or errors.
   */
  public synchronized void recordRefused() {
    growth.add(clock.millis(), 0, false);
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
    double last = growth.requests(now, 0, BUCKETS);
    double previous = growth.requests(now, BUCKETS, BUCKETS);
    double growthPart = clamp((last - previous) / Math.max(previous, config.minRequests()));
    double requests = recent.requests(now, 0, BUCKETS);
    double errors = recent.errors(now, 0, BUCKETS);
    double latencyPart = 0;
    double errorPart = 0;
    double meanLatency = 0;
    if (requests >= config.minSamples()) {
      meanLatency = recent.latency(now, 0, BUCKETS) / requests;
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

  /**
   * A ring of time buckets: each holds a request count, an error count and a latency sum for one
   * slice of time. A slot whose slice has passed is reused (and cleared) by the next add. Sums over a
   * window interpolate the bucket that straddles the window's start, as sliding-window counters do,
   * so a window is exactly as long as configured rather than off by up to a bucket.
   */
  private static final class Window {
    private final long bucketMillis;
    private final long[] slice;
    private final long[] count;
    private final long[] errors;
    private final long[] latency;

    Window(long bucketMillis, int buckets) {
      this.bucketMillis = bucketMillis;
      this.slice = new long[buckets];
      this.count = new long[buckets];
      this.errors = new long[buckets];
      this.latency = new long[buckets];
      java.util.Arrays.fill(slice, Long.MIN_VALUE / 2);
    }

    void add(long now, long latencyMillis, boolean error) {
      long current = Math.floorDiv(now, bucketMillis);
      int slot = (int) Math.floorMod(current, (long) slice.length);
      if (slice[slot] != current) {
        slice[slot] = current;
        count[slot] = 0;
        errors[slot] = 0;
        latency[slot] = 0;
      }
      count[slot]++;
      latency[slot] += latencyMillis;
      if (error) {
        errors[slot]++;
      }
    }

    double requests(long now, int fromAgo, int buckets) {
      return sum(now, fromAgo, buckets, count);
    }

    double errors(long now, int fromAgo, int buckets) {
      return sum(now, fromAgo, buckets, errors);
    }

    double latency(long now, int fromAgo, int buckets) {
      return sum(now, fromAgo, buckets, latency);
    }

    /**
     * The total over the time from {@code fromAgo + buckets} to {@code fromAgo} bucket lengths before
     * now. The bucket in progress counts whole when the window ends now; a bucket cut by a window's
     * edge counts with the share of its time inside the window.
     */
    private double sum(long now, int fromAgo, int buckets, long[] values) {
      long current = Math.floorDiv(now, bucketMillis);
      double elapsed = (double) Math.floorMod(now, bucketMillis) / bucketMillis;
      double sum = 0;
      for (int slot = 0; slot < slice.length; slot++) {
        long ago = current - slice[slot];
        if (ago == fromAgo) {
          sum += fromAgo == 0 ? values[slot] : elapsed * values[slot];
        } else if (ago > fromAgo && ago < fromAgo + buckets) {
          sum += values[slot];
        } else if (ago == fromAgo + buckets) {
          sum += (1 - elapsed) * values[slot];
        }
      }
      return sum;
    }
  }
}
