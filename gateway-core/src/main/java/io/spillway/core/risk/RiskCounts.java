package io.spillway.core.risk;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.fleet.FleetMode;

/**
 * Where the {@link RiskIndex} gets its counts: requests, errors and latency over time. The index
 * computes from whatever this answers; the source decides whose requests those are: this replica's
 * ({@link ReplicaRiskCounts}), or the whole fleet's, shared in Redis.
 *
 * <p>{@link #answered} and {@link #refused} are called on every request and must not block;
 * {@link #totals} is called on every request that shaping considers and must answer from memory.
 * Implementations are thread-safe.
 */
public interface RiskCounts extends AutoCloseable {
  /** Buckets per window: the resolution of the sliding windows. */
  int BUCKETS = 60;


  /**
   * The counts the index is computed from, at one instant.
   *
   * @param lastWindow requests in the last {@code growthWindow}
   * @param previousWindow requests in the {@code growthWindow} before it
   * @param recent requests that reached a backend in the last {@code window}
   * @param recentErrors of those, errors and capacity answers
   * @param recentLatencyMillis the sum of their latencies
   */
  record Totals(double lastWindow, double previousWindow, double recent, double recentErrors,
      double recentLatencyMillis) {}

  /** One request that reached a backend, at {@code nowMillis}: its latency and whether it failed. */
  void answered(long nowMillis, long latencyMillis, boolean error);

  /** One request the gateway refused itself, at {@code nowMillis}: it counts toward growth only. */
  void refused(long nowMillis);

  /** The counts at {@code nowMillis}, from memory. */
  Totals totals(long nowMillis);

  /** Whose counts {@link #totals} answers with now. */
  FleetMode mode();

  /** Adds what {@code /admin/status} shows about the source ({@code mode}, and where the fleet's counts live). */
  void describe(ObjectNode into);

  /** Stops background work; the counts answer from memory afterwards. */
  @Override
  void close();
}
