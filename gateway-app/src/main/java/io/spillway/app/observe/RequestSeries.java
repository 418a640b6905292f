package io.spillway.app.observe;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.Durations;
import io.spillway.core.json.Json;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Per-minute counts over a sliding window, kept in a ring buffer: requests answered, cloud answers
 * and capacity answers. Feeds {@code GET /admin/series} (the dashboard's charts) and the capacity
 * rate gauge. Time comes from the injected clock; a minute nobody wrote to reads as zero.
 * Thread-safe; each update holds a lock for a few field writes.
 */
public final class RequestSeries {
  private static final long MINUTE_MS = 60_000;

  private final Clock clock;
  private final int minutes;
  private final long[] minuteOf;
  private final long[] requests;
  private final long[] cloudAnswers;
  private final long[] capacityAnswers;
  private long totalRequests;

  public RequestSeries(Clock clock, Duration window) {
    this.clock = clock;
    this.minutes = (int) Math.max(1, window.toMinutes());
    this.minuteOf = new long[minutes];
    this.requests = new long[minutes];
    this.cloudAnswers = new long[minutes];
    this.capacityAnswers = new long[minutes];
    java.util.Arrays.fill(minuteOf, Long.MIN_VALUE);
  }

  public void recordRequest() {
    long minute = currentMinute();
    synchronized (this) {
      requests[slot(minute)]++;
      totalRequests++;
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

  /** The whole window, oldest minute first, as the JSON of {@code GET /admin/series}. */
  public ObjectNode toJson() {
    long now = currentMinute();
    ObjectNode root = Json.object();
    root.put("step", "1m");
    root.put("window", Durations.format(Duration.ofMinutes(minutes)));
    root.put("now", Instant.ofEpochMilli(clock.millis()).toString());
    ArrayNode points = root.putArray("points");
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
        point.put("cloudAnswers", cloud);
        point.put("capacityAnswers", capacity);
        point.put("capacityRate", cloud == 0 ? 0.0 : (double) capacity / cloud);
      }
    }
    return root;
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
      cloudAnswers[slot] = 0;
      capacityAnswers[slot] = 0;
    }
    return slot;
  }
}
