package io.spillway.core.sse;

import java.nio.charset.StandardCharsets;

/** Reads fields back out of one event's block of lines, for the data an event decodes lazily. */
final class SseBlocks {
  private static final byte[] DATA = {'d', 'a', 't', 'a'};

  private SseBlocks() {}

  /**
   * The values of the {@code data:} lines of the block of {@code length} bytes from {@code offset},
   * joined by line feeds, each read as {@link SseParser} reads it.
   */
  static String data(byte[] block, int offset, int length) {
    StringBuilder out = null;
    String first = null;
    int limit = offset + length;
    int position = offset;
    while (position < limit) {
      int end = position;
      while (end < limit && block[end] != '\n' && block[end] != '\r') {
        end++;
      }
      if (end > position && block[position] != ':') {
        int colon = SseParser.indexOf(block, position, end, (byte) ':');
        int fieldEnd = colon < 0 ? end : colon;
        if (SseParser.named(block, position, fieldEnd, DATA)) {
          int valueStart = SseParser.valueStart(block, colon, end);
          String value = new String(block, valueStart, end - valueStart, StandardCharsets.UTF_8);
          if (first == null) {
            first = value;
          } else {
            if (out == null) {
              out = new StringBuilder(first);
            }
            out.append('\n').append(value);
          }
        }
      }
      position = end + 1;
      if (end < limit && block[end] == '\r' && position < limit && block[position] == '\n') {
        position++;
      }
    }
    return out != null ? out.toString() : first;
  }
}
