package io.spillway.core.sse;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;

/**
 * Parses a {@code text/event-stream} body into events, line by line, as bytes arrive. Not
 * thread-safe; one reader per stream.
 *
 * <p>Reads in blocks of what the stream has available (never waiting for more than one byte), and
 * scans lines in its own buffers: relaying one chunk of a chat stream costs well under a
 * microsecond of CPU (SseRelayBenchmark). Holds about 1.2 KiB per open stream.
 */
public final class SseReader {
  private static final int READ_SIZE = 1024;

  /** A line that is not part of a {@code text/event-stream} (only with {@code strict}). */
  public static final class NotAnEventStreamException extends IOException {
    NotAnEventStreamException() {
      super("a line that is not a server-sent event field", null);
    }
  }

  private final InputStream in;
  private final SseParser parser;
  private final byte[] buffer = new byte[READ_SIZE];
  private final ArrayDeque<SseEvent> ready = new ArrayDeque<>(2);
  private boolean ended;

  public SseReader(InputStream in, int maxLineBytes) {
    this(in, maxLineBytes, () -> {});
  }

  /**
   * @param onLineWithoutData runs for every line read that carries no event data (comments such as
   *     {@code : keep-alive}, blank lines, {@code retry:}); it may throw to stop reading
   */
  public SseReader(InputStream in, int maxLineBytes, Runnable onLineWithoutData) {
    this(in, maxLineBytes, onLineWithoutData, false);
  }

  /** @param strict see {@link SseParser#SseParser} */
  public SseReader(InputStream in, int maxLineBytes, Runnable onLineWithoutData, boolean strict) {
    this.in = in;
    this.parser = new SseParser(maxLineBytes, onLineWithoutData, strict);
  }

  /** The next event, or null at the end of the input. Comments and retry lines are skipped. */
  public SseEvent next() throws IOException {
    while (ready.isEmpty()) {
      if (ended) {
        return null;
      }
      int read;
      do {
        read = in.read(buffer, 0, buffer.length);
      } while (read == 0);
      if (read < 0) {
        ended = true;
        SseEvent last = parser.finish();
        return last;
      }
      parser.feed(buffer, 0, read, ready::add);
    }
    return ready.poll();
  }
}
