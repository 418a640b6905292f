package io.spillway.core.sse;

import java.io.IOException;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * Reads {@code text/event-stream} bytes as they arrive, in whatever pieces: each call to
 * {@link #feed} hands out the events its bytes complete, and keeps a line or an event still under
 * way for the next. Comments and {@code retry:}/{@code id:} lines carry no event data; lines end in
 * LF, CR or CRLF, even across pieces. Not thread-safe.
 *
 * <p>Each event keeps the block of bytes it arrived as (see {@link SseEvent}): every line from the
 * one after the blank line that ended the previous block to the blank line that ends its own, line
 * ends included. No string is made while parsing; the parser only notes where the name and a lone
 * data line's value lie. An event that arrived within one read is a slice of that read when the
 * reads are the parser's to keep, and a copy otherwise; one that spans reads is gathered in a
 * buffer and copied out of it once whole.
 */
public final class SseParser {
  private static final byte[] DATA = {'d', 'a', 't', 'a'};
  private static final byte[] EVENT = {'e', 'v', 'e', 'n', 't'};
  private static final byte[] ID = {'i', 'd'};
  private static final byte[] RETRY = {'r', 'e', 't', 'r', 'y'};
  private static final byte[] NONE = new byte[0];
  /** A gathering buffer grown past this is let go once its event is out (a large event is rare). */
  private static final int KEPT_CARRY = 4096;

  private final int maxLineBytes;
  private final Runnable onLineWithoutData;
  private final boolean strict;
  private final boolean keepsReads;
  /** The block under way when it began in an earlier read: its bytes so far, from its start. */
  private byte[] carry = NONE;
  private int carryLength;
  /** The bytes of the line under way seen in earlier reads. */
  private int partialLine;
  /** Where the line under way starts, from the block's start. */
  private int lineStart;
  private boolean sawCarriageReturn;
  /** Where the block under way lies within the current read (when not in {@link #carry}). */
  private int blockStart;
  private int nameStart = -1;
  private int nameEnd = -1;
  private int valueStart = -1;
  private int valueEnd = -1;
  private int dataLines;

  /** A parser that copies each event out of the reads it is fed, which their owner may then reuse. */
  public SseParser(int maxLineBytes, Runnable onLineWithoutData, boolean strict) {
    this(maxLineBytes, onLineWithoutData, strict, false);
  }

  /**
   * @param onLineWithoutData runs for every line that carries no event data (comments such as
   *     {@code : keep-alive}, blank lines, {@code retry:}); it may throw to stop reading
   * @param strict whether a line that is no field the format defines nor a comment fails with
   *     {@link SseReader.NotAnEventStreamException}: the format says to ignore such lines, but an
   *     upstream that sends them (an HTML page, plain text, JSON) is not sending events at all
   * @param keepsReads whether the arrays given to {@link #feed} are the parser's to keep, unchanged
   *     (fresh arrays from the transport): an event that arrives in one read is then a slice of it
   */
  public SseParser(int maxLineBytes, Runnable onLineWithoutData, boolean strict, boolean keepsReads) {
    this.maxLineBytes = maxLineBytes;
    this.onLineWithoutData = onLineWithoutData;
    this.strict = strict;
    this.keepsReads = keepsReads;
  }

  /** Reads {@code length} bytes of {@code bytes} from {@code offset}; each event they complete goes to {@code events}. */
  public void feed(byte[] bytes, int offset, int length, Consumer<SseEvent> events) throws IOException {
    int position = offset;
    int limit = offset + length;
    blockStart = offset;
    if (sawCarriageReturn && position < limit) {
      sawCarriageReturn = false;
      if (bytes[position] == '\n') {
        // The rest of a CRLF split between reads: it belongs to the block under way, or begins the
        // next one (when its CR ended an event), so the blocks laid end to end are the stream.
        position++;
        if (carryLength > 0) {
          gather(bytes, offset, 1);
          blockStart = position;
        }
        lineStart++;
      }
    }
    while (position < limit) {
      int end = ByteScan.lineEnd(bytes, position, limit);
      checkLine(partialLine + end - position);
      if (end == limit) {
        partialLine += end - position;
        break;
      }
      partialLine = 0;
      int next = end + 1;
      if (bytes[end] == '\r') {
        if (next < limit) {
          if (bytes[next] == '\n') {
            next++;
          }
        } else {
          sawCarriageReturn = true;
        }
      }
      SseEvent complete;
      if (carryLength > 0) {
        int endInBlock = carryLength + end - position;
        gather(bytes, position, next - position);
        complete = endOfLine(carry, 0, endInBlock, carryLength);
      } else {
        complete = endOfLine(bytes, blockStart, end - blockStart, next - blockStart);
      }
      position = next;
      if (lineStart == 0) {
        // The line was blank: the block ended, and the next one starts here.
        carryLength = 0;
        blockStart = next;
        if (carry.length > KEPT_CARRY) {
          carry = NONE;
        }
      }
      if (complete != null) {
        events.accept(complete);
      }
    }
    if (carryLength > 0) {
      gather(bytes, position, limit - position);
    } else if (blockStart < limit) {
      gather(bytes, blockStart, limit - blockStart);
    }
  }

  /** The end of the input: the event still under way, if it has data, or null. */
  public SseEvent finish() throws IOException {
    SseEvent complete = null;
    if (carryLength > lineStart) {
      complete = endOfLine(carry, 0, carryLength, carryLength);
    }
    if (complete == null && dataLines > 0) {
      complete = dispatch(carry, 0, carryLength);
    }
    carryLength = 0;
    lineStart = 0;
    partialLine = 0;
    if (complete == null) {
      return null;
    }
    // Not ended by a blank line: written as the gateway writes events, so what follows stays apart.
    return new SseEvent(complete.event(), complete.data());
  }

  /**
   * One whole line of the block that starts at {@code base} of {@code block}: it runs from
   * {@link #lineStart} to {@code end}, and its line end to {@code next} (both from the block's
   * start). Answers the event a blank line ends, if any.
   */
  private SseEvent endOfLine(byte[] block, int base, int end, int next) throws IOException {
    int start = lineStart;
    lineStart = next;
    if (end == start) {
      lineStart = 0;
      if (dataLines > 0) {
        return dispatch(block, base, next);
      }
      nameStart = -1;
      onLineWithoutData.run();
      return null;
    }
    int from = base + start;
    int to = base + end;
    if (block[from] == ':') {
      onLineWithoutData.run();
      return null;
    }
    int colon = indexOf(block, from, to, (byte) ':');
    int fieldEnd = colon < 0 ? to : colon;
    int value = valueStart(block, colon, to);
    if (named(block, from, fieldEnd, DATA)) {
      if (dataLines++ == 0) {
        valueStart = value - base;
        valueEnd = end;
      }
    } else if (named(block, from, fieldEnd, EVENT)) {
      nameStart = value - base;
      nameEnd = end;
    } else if (strict && !named(block, from, fieldEnd, ID) && !named(block, from, fieldEnd, RETRY)) {
      throw new SseReader.NotAnEventStreamException();
    } else {
      onLineWithoutData.run();
    }
    return null;
  }

  private SseEvent dispatch(byte[] block, int base, int length) {
    SseEvent complete;
    int value = dataLines == 1 ? valueStart : -1;
    if (block == carry) {
      complete = SseEvent.arrived(Arrays.copyOf(carry, length), 0, length, nameStart, nameEnd, value, valueEnd);
    } else if (keepsReads) {
      complete = SseEvent.arrived(block, base, length, nameStart, nameEnd, value, valueEnd);
    } else {
      complete = SseEvent.arrived(Arrays.copyOfRange(block, base, base + length), 0, length, nameStart, nameEnd,
          value, valueEnd);
    }
    nameStart = -1;
    nameEnd = -1;
    valueStart = -1;
    valueEnd = -1;
    dataLines = 0;
    return complete;
  }

  private void checkLine(int length) throws IOException {
    if (length > maxLineBytes) {
      throw new IOException("server-sent event line longer than " + maxLineBytes + " bytes");
    }
  }

  private void gather(byte[] bytes, int from, int count) {
    int needed = carryLength + count;
    if (needed > carry.length) {
      carry = Arrays.copyOf(carry, Math.max(needed, Math.max(256, 2 * carry.length)));
    }
    System.arraycopy(bytes, from, carry, carryLength, count);
    carryLength = needed;
  }

  /** Where a field's value starts: after its colon and one space, or at {@code end} without a colon. */
  static int valueStart(byte[] bytes, int colon, int end) {
    if (colon < 0) {
      return end;
    }
    int start = colon + 1;
    return start < end && bytes[start] == ' ' ? start + 1 : start;
  }

  static int indexOf(byte[] bytes, int from, int to, byte b) {
    for (int i = from; i < to; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  static boolean named(byte[] bytes, int from, int fieldEnd, byte[] name) {
    return fieldEnd - from == name.length && Arrays.equals(bytes, from, fieldEnd, name, 0, name.length);
  }
}
