package io.spillway.core.risk;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.fleet.FleetMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * This replica's own counts, in memory: two rings of {@link RiskCounts#BUCKETS} buckets, one for
 * request growth (two {@code growthWindow}s back to back) and one for latency and errors over
 * {@code window}. Also the building block of the fleet's source, which keeps its pending deltas
 * and its view of the fleet in instances of this class. Thread-safe.
 */
public final class ReplicaRiskCounts implements RiskCounts {
  private final RiskWindow growth;
  private final RiskWindow recent;

  /**
   * @param growthWindow the span compared with the one before it for request growth
   * @param window the span of latency and errors
   */
  public ReplicaRiskCounts(Duration growthWindow, Duration window) {
    this.growth = new RiskWindow(growthWindow.toMillis() / BUCKETS, 2 * BUCKETS + 1);
    this.recent = new RiskWindow(window.toMillis() / BUCKETS, BUCKETS + 1);
  }

  /** The bucket length of the growth ring, in milliseconds. */
  public long growthBucketMillis() {
    return growth.bucketMillis();
  }

  /** The bucket length of the latency and error ring, in milliseconds. */
  public long recentBucketMillis() {
    return recent.bucketMillis();
  }

  @Override
  public synchronized void answered(long nowMillis, long latencyMillis, boolean error) {
    growth.add(nowMillis, 0, false);
    recent.add(nowMillis, Math.max(0, latencyMillis), error);
  }

  @Override
  public synchronized void refused(long nowMillis) {
    growth.add(nowMillis, 0, false);
  }

  /** Adds counts bucket by bucket, e.g. what Redis holds for the fleet. */
  public synchronized void add(List<RiskWindow.Bucket> growthBuckets, List<RiskWindow.Bucket> recentBuckets) {
    growthBuckets.forEach(growth::add);
    recentBuckets.forEach(recent::add);
  }

  /** Adds everything {@code other} holds. */
  public void addAll(ReplicaRiskCounts other) {
    List<RiskWindow.Bucket> g = other.growthBuckets();
    List<RiskWindow.Bucket> r = other.recentBuckets();
    add(g, r);
  }

  /** The growth ring's non-empty buckets (request counts only). */
  public synchronized List<RiskWindow.Bucket> growthBuckets() {
    List<RiskWindow.Bucket> out = new ArrayList<>();
    growth.forEach(out::add);
    return out;
  }

  /** The latency and error ring's non-empty buckets. */
  public synchronized List<RiskWindow.Bucket> recentBuckets() {
    List<RiskWindow.Bucket> out = new ArrayList<>();
    recent.forEach(out::add);
    return out;
  }

  /** Whether nothing was counted. */
  public synchronized boolean isEmpty() {
    return growthBuckets().isEmpty() && recentBuckets().isEmpty();
  }

  @Override
  public synchronized Totals totals(long now) {
    return new Totals(growth.requests(now, 0, BUCKETS), growth.requests(now, BUCKETS, BUCKETS),
        recent.requests(now, 0, BUCKETS), recent.errors(now, 0, BUCKETS), recent.latency(now, 0, BUCKETS));
  }

  @Override
  public FleetMode mode() {
    return FleetMode.REPLICA;
  }

  @Override
  public void describe(ObjectNode into) {
    into.put("mode", FleetMode.REPLICA.tag());
  }

  @Override
  public void close() {}
}
