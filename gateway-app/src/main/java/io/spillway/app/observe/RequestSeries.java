package io.spillway.app.observe;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.Durations;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.BackendKind;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;

/**
 * Per-minute counts over a sliding window, kept in a ring buffer: requests answered (split by who
 * answered them: cloud, local, cache, or nobody), cloud answers, capacity answers, and how long
 * successful answers from the cloud and from local took to begin. Feeds {@code GET /admin/series}
 * (the dashboard's charts) and the capacity rate gauge. Time comes from the injected clock; a
 * minute nobody wrote to reads as zero.
 *
 * <p>Latencies go into a histogram per minute and backend whose buckets grow by 2<sup>1/4</sup>
 * (about 19 %) from 1 ms to 17 minutes; a quantile reads as the upper bound of the bucket it falls
 * in, so p50 and p99 are at most 19 % above the exact value and never below it.
 *
 * <p>Thread-safe; each update holds a lock for a few field writes.
 */
public final class RequestSeries {
  private static final long MINUTE_MS = 60_000;
  /** Who answered: the index of each {@link #ANSWERED_BY} entry in {@link #answered}. */
  private static final String[] ANSWERED_BY = {"cloud", "local", "cache", "none"};
  /** The backends whose latency is kept: cloud and local. */
  private static final String[] TIMED = {"cloud", "local"};
  static final int BUCKETS = 81;

  private final Clock clock;
  private final int minutes;
  private final Duration recent;
  private final long startMinute;
  private final long[] minuteOf;
  private final long[] requests;
  private final long[][] answered;
  private final long[] cloudAnswers;
  private final long[] capacityAnswers;
  /** [slot][backend][bucket], allocated for a slot the first time it records a latency. */
  private final long[][][] latency;
  private long totalRequests;

  /**
   * @param window how many minutes are kept ({@code metrics.seriesWindow})
   * @param recent the span of the latency figures that go with the whole series
   *     ({@code metrics.capacityWindow}, the span of the capacity rate)
   */
  public RequestSeries(Clock clock, Duration window, Duration recent) {
    this.clock = clock;
    this.minutes = (int) Math.max(1, window.toMinutes());
    this.recent = recent;
    this.startMinute = currentMinute();
    this.minuteOf = new long[minutes];
    this.requests = new long[minutes];
    this.answered = new long[minutes][ANSWERED_BY.length];
    this.cloudAnswers = new long[minutes];
    this.capacityAnswers = new long[minutes];
    this.latency = new long[minutes][][];
    Arrays.fill(minuteOf, Long.MIN_VALUE);
  }

  /** One request answered, by nobody in particular (refused before a backend). */
  public void recordRequest() {
    recordRequest(null, -1);
  }

  /**
   * One request answered.
   *
   * @param answeredBy who answered it; null when Spillway itself refused it before any backend
   * @param latencyNanos for a successful answer from the cloud or local, how long it took to begin
   *     (a stream's first event, or the whole buffered answer); negative when it is not timed
   */
  public void recordRequest(BackendKind answeredBy, long latencyNanos) {
    long minute = currentMinute();
    int who = answeredBy == null ? 3 : switch (answeredBy) {
      case CLOUD -> 0;
      case LOCAL -> 1;
      case CACHE -> 2;
    };
    synchronized (this) {
      int slot = slot(minute);
      requests[slot]++;
      answered[slot][who]++;
      totalRequests++;
      if (latencyNanos >= 0 && who < TIMED.length) {
        if (latency[slot] == null) {
          latency[slot] = new long[TIMED.length][BUCKETS];
        }
        latency[slot][who][bucket(latencyNanos)]++;
      }
    }
  }

  /** One answer from the cloud backend; {@code capacity} when it was a capacity answer. */
  public void recordCloudAnswer(boolean capacity) {
    long minute = currentMinute();
    synchronized (this) {
      int slot = slot(minute);
      cloudAnswers[slot]++;
      if (capacity) {
        capacityAnswers[slot]++;
      }
    }
  }

  /** Requests answered since start. */
  public synchronized long totalRequests() {
    return totalRequests;
  }

  /** Capacity answers / cloud answers over the last {@code window} (0 when the cloud was not asked). */
  public double capacityRate(Duration window) {
    long now = currentMinute();
    long span = Math.min(minutes, Math.max(1, window.toMinutes()));
    long cloud = 0;
    long capacity = 0;
    synchronized (this) {
      for (long m = now - span + 1; m <= now; m++) {
        int slot = (int) Math.floorMod(m, (long) minutes);
        if (minuteOf[slot] == m) {
          cloud += cloudAnswers[slot];
          capacity += capacityAnswers[slot];
        }
      }
    }
    return cloud == 0 ? 0.0 : (double) capacity / cloud;
  }

  /**
   * The whole window, oldest minute first, as the JSON of {@code GET /admin/series}; its
   * {@code since} is the minute this series started (the process's start), its {@code latencyMs}
   * (p50, p99 and count per backend) covers the last {@code recent} ({@code latencyWindow}).
   */
  public ObjectNode toJson() {
    long now = currentMinute();
    long recentFrom = now - Math.min(minutes, Math.max(1, recent.toMinutes())) + 1;
    ObjectNode root = Json.object();
    root.put("step", "1m");
    root.put("window", Durations.format(Duration.ofMinutes(minutes)));
    root.put("now", Instant.ofEpochMilli(clock.millis()).toString());
    root.put("since", Instant.ofEpochMilli(startMinute * MINUTE_MS).toString());
    ArrayNode points = root.putArray("points");
    long[][] recentLatency = new long[TIMED.length][BUCKETS];
    synchronized (this) {
      root.put("totalRequests", totalRequests);
      for (long m = now - minutes + 1; m <= now; m++) {
        int slot = (int) Math.floorMod(m, (long) minutes);
        boolean live = minuteOf[slot] == m;
        long req = live ? requests[slot] : 0;
        long cloud = live ? cloudAnswers[slot] : 0;
        long capacity = live ? capacityAnswers[slot] : 0;
        ObjectNode point = points.addObject();
        point.put("t", Instant.ofEpochMilli(m * MINUTE_MS).toString());
        point.put("requests", req);
        ObjectNode by = point.putObject("answeredBy");
        for (int i = 0; i < ANSWERED_BY.length; i++) {
          by.put(ANSWERED_BY[i], live ? answered[slot][i] : 0);
        }
        point.put("cloudAnswers", cloud);
        point.put("capacityAnswers", capacity);
        point.put("capacityRate", cloud == 0 ? 0.0 : (double) capacity / cloud);
        long[][] histograms = live ? latency[slot] : null;
        point.set("latencyMs", latencyJson(histograms));
        if (histograms != null && m >= recentFrom) {
          for (int b = 0; b < TIMED.length; b++) {
            for (int i = 0; i < BUCKETS; i++) {
              recentLatency[b][i] += histograms[b][i];
            }
          }
        }
      }
    }
    root.put("latencyWindow", Durations.format(Duration.ofMinutes(now - recentFrom + 1)));
    root.set("latencyMs", latencyJson(recentLatency));
    return root;
  }

  /** {@code {"cloud": {"p50":…,"p99":…,"count":…}, "local": {…}}}; p50 and p99 are null with no answer. */
  private static ObjectNode latencyJson(long[][] histograms) {
    ObjectNode out = Json.object();
    for (int b = 0; b < TIMED.length; b++) {
      long[] h = histograms == null ? null : histograms[b];
      long count = h == null ? 0 : Arrays.stream(h).sum();
      ObjectNode node = out.putObject(TIMED[b]);
      node.put("count", count);
      if (count == 0) {
        node.putNull("p50");
        node.putNull("p99");
      } else {
        node.put("p50", quantileMs(h, count, 0.50));
        node.put("p99", quantileMs(h, count, 0.99));
      }
    }
    return out;
  }

  /** The upper bound, in ms, of the bucket the {@code q} quantile falls in. */
  private static double quantileMs(long[] histogram, long count, double q) {
    long rank = (long) Math.ceil(q * count);
    long seen = 0;
    for (int i = 0; i < histogram.length; i++) {
      seen += histogram[i];
      if (seen >= rank) {
        return upperBoundMs(i);
      }
    }
    return upperBoundMs(histogram.length - 1);
  }

  /** Bucket {@code i} holds latencies up to 2<sup>i/4</sup> ms (the last one, everything longer). */
  static double upperBoundMs(int i) {
    return Math.round(Math.pow(2, i / 4.0) * 10) / 10.0;
  }

  static int bucket(long nanos) {
    double ms = nanos / 1e6;
    if (ms <= 1) {
      return 0;
    }
    int i = (int) Math.ceil(4 * Math.log(ms) / Math.log(2) - 1e-9);
    return Math.min(BUCKETS - 1, i);
  }

  private long currentMinute() {
    return Math.floorDiv(clock.millis(), MINUTE_MS);
  }

  /** The slot of {@code minute}, cleared first when it still holds an older minute. Caller holds the lock. */
  private int slot(long minute) {
    int slot = (int) Math.floorMod(minute, (long) minutes);
    if (minuteOf[slot] != minute) {
      minuteOf[slot] = minute;
      requests[slot] = 0;
      Arrays.fill(answered[slot], 0);
      cloudAnswers[slot] = 0;
      capacityAnswers[slot] = 0;
      if (latency[slot] != null) {
        for (long[] h : latency[slot]) {
          Arrays.fill(h, 0);
        }
      }
    }
    return slot;
  }
}
