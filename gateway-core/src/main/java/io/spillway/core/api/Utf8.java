package io.spillway.core.api;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Strict UTF-8 validation of a request body without decoding it (RFC 3629: no overlong forms, no
 * encoded surrogates, nothing above U+10FFFF, no sequence cut short), the same verdict as Java's
 * reporting {@code CharsetDecoder}. ASCII, most of any JSON body, is checked eight bytes at a time.
 */
final class Utf8 {
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long HIGH_BITS = 0x8080808080808080L;

  private Utf8() {}

  /** The offset of the first byte of the first malformed sequence in {@code bytes}, or -1 when all is well-formed. */
  static int firstMalformed(byte[] bytes) {
    int n = bytes.length;
    int i = 0;
    while (i < n) {
      if (i + 8 <= n && ((long) LONGS.get(bytes, i) & HIGH_BITS) == 0) {
        i += 8;
        continue;
      }
      int b = bytes[i] & 0xff;
      if (b < 0x80) {
        i++;
        continue;
      }
      int length;
      int min = 0x80;
      int max = 0xbf;
      if (b >= 0xc2 && b <= 0xdf) {
        length = 2;
      } else if (b >= 0xe0 && b <= 0xef) {
        length = 3;
        if (b == 0xe0) {
          min = 0xa0;
        } else if (b == 0xed) {
          max = 0x9f;
        }
      } else if (b >= 0xf0 && b <= 0xf4) {
        length = 4;
        if (b == 0xf0) {
          min = 0x90;
        } else if (b == 0xf4) {
          max = 0x8f;
        }
      } else {
        return i;
      }
      if (i + length > n) {
        return i;
      }
      int second = bytes[i + 1] & 0xff;
      if (second < min || second > max) {
        return i;
      }
      for (int k = 2; k < length; k++) {
        int next = bytes[i + k] & 0xff;
        if (next < 0x80 || next > 0xbf) {
          return i;
        }
      }
      i += length;
    }
    return -1;
  }
}
