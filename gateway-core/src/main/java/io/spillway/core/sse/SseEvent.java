package io.spillway.core.sse;

import java.nio.charset.StandardCharsets;

/**
 * One server-sent event. {@code event} is null for unnamed events (chat/completions chunks) and set
 * for the Responses API's typed events.
 */
public record SseEvent(String event, String data) {
  public static final String DONE_DATA = "[DONE]";
  public static final SseEvent DONE = new SseEvent(null, DONE_DATA);
  /**
   * Not an event: what {@link EventStream#poll} answers when nothing has arrived yet. Compared by
   * identity; never written.
   */
  public static final SseEvent PENDING = new SseEvent(null, "");
  private static final byte[] DATA_PREFIX = "data: ".getBytes(StandardCharsets.US_ASCII);

  public static SseEvent data(String data) {
    return new SseEvent(null, data);
  }

  /**
   * Whether the data may carry token usage: it has a {@code "usage"} key whose value is an object
   * (OpenAI streams with {@code include_usage} send {@code "usage":null} in every other chunk). A
   * cheap scan, so the usage readers parse only the events that can matter; a JSON string cannot
   * hold the quoted word unescaped, so text inside one never matches.
   */
  public boolean mayCarryUsage() {
    String key = "\"usage\"";
    for (int at = data.indexOf(key); at >= 0; at = data.indexOf(key, at + key.length())) {
      int i = skipSpaces(at + key.length());
      if (i < data.length() && data.charAt(i) == ':') {
        i = skipSpaces(i + 1);
        if (i < data.length() && data.charAt(i) == '{') {
          return true;
        }
      }
    }
    return false;
  }

  private int skipSpaces(int i) {
    while (i < data.length() && Character.isWhitespace(data.charAt(i))) {
      i++;
    }
    return i;
  }

  public boolean isDone() {
    return DONE_DATA.equals(data);
  }

  /** The wire form: optional {@code event:} line, one {@code data:} line per line of data, blank line. */
  public byte[] encode() {
    if (event == null && data.indexOf('\n') < 0) {
      // Every chat/completions chunk: one copy of the data instead of three (SseRelayBenchmark).
      byte[] value = data.getBytes(StandardCharsets.UTF_8);
      byte[] out = new byte[DATA_PREFIX.length + value.length + 2];
      System.arraycopy(DATA_PREFIX, 0, out, 0, DATA_PREFIX.length);
      System.arraycopy(value, 0, out, DATA_PREFIX.length, value.length);
      out[out.length - 2] = '\n';
      out[out.length - 1] = '\n';
      return out;
    }
    StringBuilder out = new StringBuilder(data.length() + 16);
    if (event != null) {
      out.append("event: ").append(event).append('\n');
    }
    int start = 0;
    while (true) {
      int newline = data.indexOf('\n', start);
      out.append("data: ");
      if (newline < 0) {
        out.append(data, start, data.length()).append('\n');
        break;
      }
      out.append(data, start, newline).append('\n');
      start = newline + 1;
    }
    out.append('\n');
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }
}
