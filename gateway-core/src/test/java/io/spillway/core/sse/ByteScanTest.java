package io.spillway.core.sse;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/** Eight bytes at a time finds exactly what one at a time finds, at every offset and length. */
class ByteScanTest {
  @Test
  void wordScansFindWhatAByteLoopFinds() {
    Random random = new Random(15);
    byte[] alphabet = {'\n', '\r', 'u', '"', 'a', 0, (byte) 0x8a, (byte) 0x8d, (byte) 0xff, 0x0b, 0x09, 0x01};
    for (int round = 0; round < 2000; round++) {
      byte[] bytes = new byte[random.nextInt(40)];
      for (int i = 0; i < bytes.length; i++) {
        bytes[i] = random.nextInt(4) == 0 ? alphabet[random.nextInt(alphabet.length)] : (byte) random.nextInt(256);
      }
      int from = bytes.length == 0 ? 0 : random.nextInt(bytes.length);
      int to = from + random.nextInt(bytes.length - from + 1);
      byte wanted = alphabet[random.nextInt(alphabet.length)];

      assertThat(ByteScan.lineEnd(bytes, from, to)).isEqualTo(naiveLineEnd(bytes, from, to));
      assertThat(ByteScan.indexOf(bytes, from, to, wanted)).isEqualTo(naiveIndexOf(bytes, from, to, wanted));
    }
  }

  private static int naiveLineEnd(byte[] bytes, int from, int to) {
    for (int i = from; i < to; i++) {
      if (bytes[i] == '\n' || bytes[i] == '\r') {
        return i;
      }
    }
    return to;
  }

  private static int naiveIndexOf(byte[] bytes, int from, int to, byte b) {
    for (int i = from; i < to; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }
}
