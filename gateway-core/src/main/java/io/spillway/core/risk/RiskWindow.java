package io.spillway.core.risk;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * A ring of time buckets: each holds a request count, an error count and a latency sum for one slice
 * of time. A slice is {@code floor(epochMillis / bucketMillis)}, so replicas with the same settings
 * and synchronised clocks number their buckets alike and their counts can be added up. A slot whose
 * slice has passed is reused (and cleared) by the next add. Sums over a window interpolate the bucket
 * that straddles the window's start, as sliding-window counters do, so a window is exactly as long as
 * configured rather than off by up to a bucket.
 *
 * <p>Not thread-safe: its owner holds the lock.
 */
public final class RiskWindow {
  private final long bucketMillis;
  private final long[] slice;
  private final long[] count;
  private final long[] errors;
  private final long[] latency;

  /** A window of {@code buckets} slots of {@code bucketMillis} each. */
  public RiskWindow(long bucketMillis, int buckets) {
    this.bucketMillis = Math.max(1, bucketMillis);
    this.slice = new long[buckets];
    this.count = new long[buckets];
    this.errors = new long[buckets];
    this.latency = new long[buckets];
    clear();
  }

  /** One bucket's counts: its slice and what was added to it. */
  public record Bucket(long slice, long count, long errors, long latencyMillis) {}

  public long bucketMillis() {
    return bucketMillis;
  }

  public int buckets() {
    return slice.length;
  }

  /** The slice {@code nowMillis} falls in. */
  public long sliceAt(long nowMillis) {
    return Math.floorDiv(nowMillis, bucketMillis);
  }

  /** Adds one request at {@code nowMillis}. */
  public void add(long nowMillis, long latencyMillis, boolean error) {
    add(new Bucket(sliceAt(nowMillis), 1, error ? 1 : 0, latencyMillis));
  }

  /**
   * Adds counts to the bucket of their slice; counts of a slice older than every slot holds (or
   * than the slot's current slice) are dropped.
   */
  public void add(Bucket bucket) {
    int slot = (int) Math.floorMod(bucket.slice(), (long) slice.length);
    if (slice[slot] > bucket.slice()) {
      return;
    }
    if (slice[slot] != bucket.slice()) {
      slice[slot] = bucket.slice();
      count[slot] = 0;
      errors[slot] = 0;
      latency[slot] = 0;
    }
    count[slot] += bucket.count();
    errors[slot] += bucket.errors();
    latency[slot] += bucket.latencyMillis();
  }

  /** Every bucket that holds a count, in no particular order. */
  public void forEach(Consumer<Bucket> action) {
    for (int slot = 0; slot < slice.length; slot++) {
      if (count[slot] != 0 || errors[slot] != 0 || latency[slot] != 0) {
        action.accept(new Bucket(slice[slot], count[slot], errors[slot], latency[slot]));
      }
    }
  }

  /** Empties every bucket. */
  public void clear() {
    Arrays.fill(slice, Long.MIN_VALUE / 2);
    Arrays.fill(count, 0);
    Arrays.fill(errors, 0);
    Arrays.fill(latency, 0);
  }

  public double requests(long now, int fromAgo, int buckets) {
    return sum(now, fromAgo, buckets, count);
  }

  public double errors(long now, int fromAgo, int buckets) {
    return sum(now, fromAgo, buckets, errors);
  }

  public double latency(long now, int fromAgo, int buckets) {
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
