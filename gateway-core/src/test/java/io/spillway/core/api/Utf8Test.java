package io.spillway.core.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The UTF-8 check gives the verdict, and the position, of Java's strict decoder, which it replaced. */
class Utf8Test {
  @Test
  void wellFormedTextOfEveryWidthPasses() {
    String text = "plain ascii, caf\u00e9, \u20ac, \ud83d\ude00 and more ascii to cross an eight-byte word";
    assertThat(Utf8.firstMalformed(text.getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
    assertThat(Utf8.firstMalformed(new byte[0])).isEqualTo(-1);
  }

  @Test
  void overlongSurrogateTooHighAndCutShortSequencesAreMalformedWhereTheyStart() {
    assertThat(Utf8.firstMalformed(bytes(0x41, 0xc0, 0xaf))).isEqualTo(1); // overlong '/'
    assertThat(Utf8.firstMalformed(bytes(0x41, 0x42, 0xe0, 0x80, 0xaf))).isEqualTo(2); // overlong, 3 bytes
    assertThat(Utf8.firstMalformed(bytes(0xed, 0xa0, 0x80))).isEqualTo(0); // an encoded surrogate
    assertThat(Utf8.firstMalformed(bytes(0xf4, 0x90, 0x80, 0x80))).isEqualTo(0); // above U+10FFFF
    assertThat(Utf8.firstMalformed(bytes(0x41, 0xe2, 0x82))).isEqualTo(1); // cut short at the end
    assertThat(Utf8.firstMalformed(bytes(0x80))).isEqualTo(0); // a lone continuation byte
  }

  @Test
  void randomBytesGetTheVerdictOfJavasStrictDecoder() {
    Random random = new Random(28);
    for (int round = 0; round < 20_000; round++) {
      byte[] bytes = new byte[random.nextInt(40)];
      for (int i = 0; i < bytes.length; i++) {
        // Mostly ASCII and valid multi-byte text, with a byte of anything now and then.
        bytes[i] = (byte) (random.nextInt(8) == 0 ? random.nextInt(256) : 0x20 + random.nextInt(0x5f));
      }
      if (random.nextBoolean() && bytes.length > 4) {
        byte[] valid = new String(Character.toChars(random.nextInt(0x10ffff))).getBytes(StandardCharsets.UTF_8);
        int at = random.nextInt(bytes.length - 4);
        System.arraycopy(valid, 0, bytes, at, Math.min(valid.length, bytes.length - at));
      }
      assertThat(Utf8.firstMalformed(bytes)).as("round %d", round).isEqualTo(decoderVerdict(bytes));
    }
  }

  private static int decoderVerdict(byte[] body) {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(body);
    CharBuffer out = CharBuffer.allocate(Math.max(16, body.length));
    CoderResult result = decoder.decode(in, out, true);
    return result.isError() ? in.position() : -1;
  }

  private static byte[] bytes(int... values) {
    byte[] out = new byte[values.length];
    for (int i = 0; i < values.length; i++) {
      out[i] = (byte) values[i];
    }
    return out;
  }
}
