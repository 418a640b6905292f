package io.spillway.core.sse;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Reads {@code text/event-stream} bytes as they arrive, in whatever pieces: each call to
 * {@link #feed} hands out the events its bytes complete, and keeps a line or an event still under
 * way for the next. Comments and {@code retry:}/{@code id:} lines are skipped; lines end in LF, CR
 * or CRLF, even across pieces. Not thread-safe.
 */
public final class SseParser {
  private static final byte[] DATA = {'d', 'a', 't', 'a'};
  private static final byte[] EVENT = {'e', 'v', 'e', 'n', 't'};
  private static final byte[] ID = {'i', 'd'};
  private static final byte[] RETRY = {'r', 'e', 't', 'r', 'y'};

  private final int maxLineBytes;
  private final Runnable onLineWithoutData;
  private final boolean strict;
  private byte[] line = new byte[128];
  private int lineLength;
  private boolean sawCarriageReturn;
  private String event;
  private String data;
  private StringBuilder lines;

  /**
   * @param onLineWithoutData runs for every line that carries no event data (comments such as
   *     {@code : keep-alive}, blank lines, {@code retry:}); it may throw to stop reading
   * @param strict whether a line that is no field the format defines nor a comment fails with
   *     {@link SseReader.NotAnEventStreamException}: the format says to ignore such lines, but an
   *     upstream that sends them (an HTML page, plain text, JSON) is not sending events at all
   */
  public SseParser(int maxLineBytes, Runnable onLineWithoutData, boolean strict) {
    this.maxLineBytes = maxLineBytes;
    this.onLineWithoutData = onLineWithoutData;
    this.strict = strict;
  }

  /** Reads {@code length} bytes of {@code bytes} from {@code offset}; each event they complete goes to {@code events}. */
  public void feed(byte[] bytes, int offset, int length, Consumer<SseEvent> events) throws IOException {
    int position = offset;
    int limit = offset + length;
    while (position < limit) {
      if (sawCarriageReturn) {
        sawCarriageReturn = false;
        if (bytes[position] == '\n' && lineLength == 0) {
          position++;
          continue;
        }
      }
      int end = position;
      while (end < limit && bytes[end] != '\n' && bytes[end] != '\r') {
        end++;
      }
      append(bytes, position, end - position);
      if (end == limit) {
        return;
      }
      sawCarriageReturn = bytes[end] == '\r';
      position = end + 1;
      SseEvent complete = endOfLine();
      lineLength = 0;
      if (complete != null) {
        events.accept(complete);
      }
    }
  }

  /** The end of the input: the event still under way, if it has data, or null. */
  public SseEvent finish() throws IOException {
    SseEvent complete = lineLength > 0 ? endOfLine() : null;
    lineLength = 0;
    if (complete != null) {
      return complete;
    }
    return data == null ? null : dispatch();
  }

  private SseEvent endOfLine() throws IOException {
    int length = lineLength;
    byte[] text = line;
    if (length == 0) {
      if (data != null) {
        return dispatch();
      }
      event = null;
      onLineWithoutData.run();
      return null;
    }
    if (text[0] == ':') {
      onLineWithoutData.run();
      return null;
    }
    int colon = indexOf(text, length, (byte) ':');
    int fieldEnd = colon < 0 ? length : colon;
    int valueStart = colon < 0 ? length : colon + 1;
    if (valueStart < length && text[valueStart] == ' ') {
      valueStart++;
    }
    if (named(text, fieldEnd, DATA)) {
      String value = new String(text, valueStart, length - valueStart, StandardCharsets.UTF_8);
      if (data == null) {
        data = value;
      } else {
        if (lines == null) {
          lines = new StringBuilder(data);
        }
        lines.append('\n').append(value);
      }
    } else if (named(text, fieldEnd, EVENT)) {
      event = new String(text, valueStart, length - valueStart, StandardCharsets.UTF_8);
    } else if (strict && !named(text, fieldEnd, ID) && !named(text, fieldEnd, RETRY)) {
      throw new SseReader.NotAnEventStreamException();
    } else {
      onLineWithoutData.run();
    }
    return null;
  }

  private SseEvent dispatch() {
    SseEvent complete = new SseEvent(event, lines != null ? lines.toString() : data);
    event = null;
    data = null;
    lines = null;
    return complete;
  }

  private void append(byte[] bytes, int from, int count) throws IOException {
    int needed = lineLength + count;
    if (needed > maxLineBytes) {
      throw new IOException("server-sent event line longer than " + maxLineBytes + " bytes");
    }
    if (needed > line.length) {
      line = Arrays.copyOf(line, (int) Math.min(maxLineBytes, Math.max(needed, 2L * line.length)));
    }
    System.arraycopy(bytes, from, line, lineLength, count);
    lineLength = needed;
  }

  private static int indexOf(byte[] bytes, int length, byte b) {
    for (int i = 0; i < length; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  private static boolean named(byte[] text, int fieldEnd, byte[] name) {
    return fieldEnd == name.length && Arrays.equals(text, 0, fieldEnd, name, 0, fieldEnd);
  }
}
