package io.spillway.quota.store;

/**
 * Sums of tokens and nano-dollars that stop at {@link Long#MAX_VALUE} (or {@link Long#MIN_VALUE})
 * instead of wrapping: a counter that overflowed would turn a pool or a team's spend negative and
 * admit everything. The Redis scripts saturate the same way.
 */
public final class Saturating {
  private Saturating() {}

  public static long add(long a, long b) {
    long sum = a + b;
    // Overflow only when both have the same sign and the sum's sign differs.
    if (((a ^ sum) & (b ^ sum)) < 0) {
      return a < 0 ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    return sum;
  }
}
