package io.spillway.core.sse;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * Parses a {@code text/event-stream} body into events, line by line, as bytes arrive. Not
 * thread-safe; one reader per stream.
 */
public final class SseReader {
  private final InputStream in;
  private final int maxLineBytes;
  private final Runnable onLineWithoutData;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
  private boolean sawCarriageReturn;

  public SseReader(InputStream in, int maxLineBytes) {
    this(in, maxLineBytes, () -> {});
  }

  /**
   * @param onLineWithoutData runs for every line read that carries no event data (comments such as
   *     {@code : keep-alive}, blank lines, {@code retry:}); it may throw to stop reading
   */
  public SseReader(InputStream in, int maxLineBytes, Runnable onLineWithoutData) {
    this.in = in;
    this.maxLineBytes = maxLineBytes;
    this.onLineWithoutData = onLineWithoutData;
  }

  /** The next event, or null at the end of the input. Comments and retry lines are skipped. */
  public SseEvent next() throws IOException {
    String event = null;
    StringBuilder data = null;
    while (true) {
      String text = readLine();
      if (text == null) {
        return data == null ? null : new SseEvent(event, data.toString());
      }
      if (text.isEmpty()) {
        if (data != null) {
          return new SseEvent(event, data.toString());
        }
        event = null;
        onLineWithoutData.run();
        continue;
      }
      if (text.charAt(0) == ':') {
        onLineWithoutData.run();
        continue;
      }
      int colon = text.indexOf(':');
      String field = colon < 0 ? text : text.substring(0, colon);
      String value = colon < 0 ? "" : text.substring(colon + 1);
      if (value.startsWith(" ")) {
        value = value.substring(1);
      }
      switch (field) {
        case "data" -> {
          if (data == null) {
            data = new StringBuilder(value.length());
          } else {
            data.append('\n');
          }
          data.append(value);
        }
        case "event" -> event = value;
        default -> onLineWithoutData.run();
      }
    }
  }

  private String readLine() throws IOException {
    line.reset();
    while (true) {
      int b = in.read();
      if (b < 0) {
        return line.size() == 0 ? null : line.toString(StandardCharsets.UTF_8);
      }
      if (b == '\n') {
        if (sawCarriageReturn && line.size() == 0) {
          sawCarriageReturn = false;
          continue;
        }
        sawCarriageReturn = false;
        return line.toString(StandardCharsets.UTF_8);
      }
      if (b == '\r') {
        sawCarriageReturn = true;
        return line.toString(StandardCharsets.UTF_8);
      }
      sawCarriageReturn = false;
      if (line.size() >= maxLineBytes) {
        throw new IOException("server-sent event line longer than " + maxLineBytes + " bytes");
      }
      line.write(b);
    }
  }
}
