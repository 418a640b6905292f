package io.spillway.core.sse;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Finds bytes in an event's bytes eight at a time (one {@code long} read, and the "has a zero
 * byte" trick on it): the relay scans every byte of every event for its line ends and for a usage
 * key, and a byte-at-a-time loop was most of its time per event.
 */
final class ByteScan {
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;
  private static final long LFS = ONES * '\n';
  private static final long CRS = ONES * '\r';

  private ByteScan() {}

  /** The index of the first LF or CR from {@code from} up to {@code to}, or {@code to}. */
  static int lineEnd(byte[] bytes, int from, int to) {
    int i = from;
    for (; i + Long.BYTES <= to; i += Long.BYTES) {
      long word = (long) LONGS.get(bytes, i);
      long found = zeros(word ^ LFS) | zeros(word ^ CRS);
      if (found != 0) {
        return i + (Long.numberOfTrailingZeros(found) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (bytes[i] == '\n' || bytes[i] == '\r') {
        return i;
      }
    }
    return to;
  }

  /** The index of the first {@code b} from {@code from} up to {@code to}, or -1. */
  static int indexOf(byte[] bytes, int from, int to, byte b) {
    long pattern = ONES * (b & 0xff);
    int i = from;
    for (; i + Long.BYTES <= to; i += Long.BYTES) {
      long found = zeros((long) LONGS.get(bytes, i) ^ pattern);
      if (found != 0) {
        return i + (Long.numberOfTrailingZeros(found) >>> 3);
      }
    }
    for (; i < to; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  /**
   * The high bit of each zero byte of {@code word} set, and perhaps of bytes above the lowest zero
   * byte (a borrow), never below it: the lowest set bit marks the first zero byte.
   */
  private static long zeros(long word) {
    return (word - ONES) & ~word & HIGHS;
  }
}
