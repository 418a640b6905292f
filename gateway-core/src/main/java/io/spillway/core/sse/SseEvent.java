package io.spillway.core.sse;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * One server-sent event. {@code event} is null for unnamed events (chat/completions chunks) and set
 * for the Responses API's typed events.
 *
 * <p>An event read from an upstream ({@link SseParser}) keeps the bytes it arrived as, every line of
 * its block to the blank line that ended it, often as a slice of the read that brought it, and
 * decodes its name and data only when a stage asks for them: an event no stage changes leaves for
 * the client as those bytes ({@link #wire}), line ends, {@code id:} lines and comments as they came,
 * with no string made for it. The checks every event gets ({@link #isDone}, {@link #mayCarryUsage},
 * {@link #dataLooksLikeJsonObject}, {@link #nameIs}) read the bytes. An event the gateway makes (or
 * remakes, with {@link #SseEvent(String, String)}) is encoded as {@code event:} and {@code data:} lines.
 *
 * <p>Immutable; the lazily decoded fields may be computed twice by racing readers, never differently.
 */
public final class SseEvent {
  public static final String DONE_DATA = "[DONE]";
  public static final SseEvent DONE = new SseEvent(null, DONE_DATA);
  /**
   * Not an event: what {@link EventStream#poll} answers when nothing has arrived yet. Compared by
   * identity; never written.
   */
  public static final SseEvent PENDING = new SseEvent(null, "");
  private static final byte[] DATA_PREFIX = "data: ".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] DONE_BYTES = DONE_DATA.getBytes(StandardCharsets.US_ASCII);
  private static final byte[] USAGE_KEY = "\"usage\"".getBytes(StandardCharsets.US_ASCII);

  /** Where an event's wire bytes go: {@code length} bytes of {@code array} from {@code offset}. */
  @FunctionalInterface
  public interface Bytes<T> {
    T of(byte[] array, int offset, int length);
  }

  /** The name; for an upstream event, null until decoded (or for good when it has none). */
  private String event;
  /** The data; for an upstream event, null until decoded. */
  private String data;
  /** The block the event arrived as, or null for an event the gateway made. */
  private final byte[] wire;
  private final int wireOffset;
  private final int wireLength;
  /** The last {@code event:} line's value, from the block's start; -1 when it has none. */
  private final int nameStart;
  private final int nameEnd;
  /** The value of its one {@code data:} line, from the block's start; -1 when it has several. */
  private final int valueStart;
  private final int valueEnd;

  /** An event the gateway makes: it is encoded when written. */
  public SseEvent(String event, String data) {
    this.event = event;
    this.data = data;
    this.wire = null;
    this.wireOffset = 0;
    this.wireLength = 0;
    this.nameStart = -1;
    this.nameEnd = -1;
    this.valueStart = -1;
    this.valueEnd = -1;
  }

  private SseEvent(byte[] wire, int offset, int length, int nameStart, int nameEnd, int valueStart, int valueEnd) {
    this.wire = wire;
    this.wireOffset = offset;
    this.wireLength = length;
    this.nameStart = nameStart;
    this.nameEnd = nameEnd;
    this.valueStart = valueStart;
    this.valueEnd = valueEnd;
  }

  /**
   * An event read as the block of {@code length} bytes of {@code wire} from {@code offset}, which
   * must stay unchanged; positions are from the block's start (see the fields).
   */
  static SseEvent arrived(byte[] wire, int offset, int length, int nameStart, int nameEnd, int valueStart,
      int valueEnd) {
    return new SseEvent(wire, offset, length, nameStart, nameEnd, valueStart, valueEnd);
  }

  public static SseEvent data(String data) {
    return new SseEvent(null, data);
  }

  /** The event's type ({@code event:} line), or null for an unnamed event. */
  public String event() {
    if (nameStart < 0) {
      return event;
    }
    String name = event;
    if (name == null) {
      name = new String(wire, wireOffset + nameStart, nameEnd - nameStart, StandardCharsets.UTF_8);
      event = name;
    }
    return name;
  }

  /** The event's data: its {@code data:} lines' values joined by line feeds. */
  public String data() {
    String value = data;
    if (value == null && wire != null) {
      value = valueStart >= 0
          ? new String(wire, wireOffset + valueStart, valueEnd - valueStart, StandardCharsets.UTF_8)
          : SseBlocks.data(wire, wireOffset, wireLength);
      data = value;
    }
    return value;
  }

  /** Whether it has a name ({@code event:} line), without decoding it. */
  public boolean named() {
    return nameStart >= 0 || event != null;
  }

  /** Whether its name is {@code name}, compared without decoding it when {@code name} is ASCII. */
  public boolean nameIs(String name) {
    if (nameStart < 0 || event != null || !ascii(name)) {
      return name.equals(event());
    }
    return equalsAscii(wire, wireOffset + nameStart, nameEnd - nameStart, name);
  }

  /** Whether this is an event that arrived from an upstream and leaves as the bytes it came as. */
  public boolean asArrived() {
    return wire != null;
  }

  /**
   * Whether the data may carry token usage: it has a {@code "usage"} key whose value is an object
   * (OpenAI streams with {@code include_usage} send {@code "usage":null} in every other chunk). A
   * cheap scan, so the usage readers parse only the events that can matter; a JSON string cannot
   * hold the quoted word unescaped, so text inside one never matches.
   */
  public boolean mayCarryUsage() {
    if (wire == null || valueStart < 0) {
      return mayCarryUsage(data());
    }
    int from = wireOffset + valueStart;
    int to = wireOffset + valueEnd;
    for (int at = indexOf(wire, from, to, USAGE_KEY); at >= 0; at = indexOf(wire, at + USAGE_KEY.length, to, USAGE_KEY)) {
      int i = skipSpaces(wire, at + USAGE_KEY.length, to);
      if (i < to && wire[i] == ':') {
        i = skipSpaces(wire, i + 1, to);
        if (i < to && wire[i] == '{') {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean mayCarryUsage(String data) {
    return hasValueStartingWith(data, "\"usage\"", '{');
  }

  /**
   * A cheap scan of JSON text for {@code quotedKey} (with its quotes) followed by a value whose first
   * character is {@code first} ({@code '{'} for an object, {@code '"'} for a string): no parse, and
   * text inside a JSON string never matches, since it cannot hold the quoted key unescaped.
   */
  public static boolean hasValueStartingWith(String data, String quotedKey, char first) {
    for (int at = data.indexOf(quotedKey); at >= 0; at = data.indexOf(quotedKey, at + quotedKey.length())) {
      int i = skipSpaces(data, at + quotedKey.length());
      if (i < data.length() && data.charAt(i) == ':') {
        i = skipSpaces(data, i + 1);
        if (i < data.length() && data.charAt(i) == first) {
          return true;
        }
      }
    }
    return false;
  }

  private static int skipSpaces(String data, int i) {
    while (i < data.length() && Character.isWhitespace(data.charAt(i))) {
      i++;
    }
    return i;
  }

  public boolean isDone() {
    if (wire == null || valueStart < 0) {
      return DONE_DATA.equals(data());
    }
    return valueEnd - valueStart == DONE_BYTES.length
        && java.util.Arrays.equals(wire, wireOffset + valueStart, wireOffset + valueEnd, DONE_BYTES, 0, DONE_BYTES.length);
  }

  /** Whether the data starts with the ASCII character {@code c}. */
  public boolean dataStartsWith(char c) {
    if (wire == null || valueStart < 0) {
      String value = data();
      return !value.isEmpty() && value.charAt(0) == c;
    }
    return valueEnd > valueStart && wire[wireOffset + valueStart] == c;
  }

  /**
   * Whether the data is shaped as one JSON object: its first and last non-blank characters are
   * braces (a structural check, not a parse).
   */
  public boolean dataLooksLikeJsonObject() {
    if (wire == null || valueStart < 0) {
      return UpstreamEvents.jsonObject(data());
    }
    int start = skipSpaces(wire, wireOffset + valueStart, wireOffset + valueEnd);
    int end = wireOffset + valueEnd - 1;
    while (end > start && whitespace(wire[end])) {
      end--;
    }
    if (start < end && (wire[start] < 0 || wire[end] < 0)) {
      return UpstreamEvents.jsonObject(data()); // a character outside ASCII, which may be a Unicode space
    }
    return start < end && wire[start] == '{' && wire[end] == '}';
  }

  /**
   * Whether the event's name or data may contain {@code text} (ASCII, no line ends): for an event
   * that arrived, a scan of its bytes, comments and {@code id:} lines included, so never false when
   * its name or data contains it. A filter to run before decoding.
   */
  public boolean mayContain(String text) {
    if (wire == null) {
      return (data != null && data.contains(text)) || (event != null && event.contains(text));
    }
    return indexOf(wire, wireOffset, wireOffset + wireLength, text.getBytes(StandardCharsets.ISO_8859_1)) >= 0;
  }

  /** About how many bytes the event takes to keep: its wire form, or its strings. */
  public int size() {
    if (wire != null) {
      return wireLength;
    }
    return (data == null ? 0 : data.length()) + (event == null ? 0 : event.length());
  }

  /**
   * Hands its wire form to {@code to}: the bytes it arrived as when it came from an upstream (no
   * copy), or its encoding when the gateway made it.
   */
  public <T> T wire(Bytes<T> to) {
    if (wire != null) {
      return to.of(wire, wireOffset, wireLength);
    }
    byte[] encoded = encode();
    return to.of(encoded, 0, encoded.length);
  }

  /**
   * The wire form as an array of its own: the bytes it arrived as, or for an event the gateway made,
   * an optional {@code event:} line, one {@code data:} line per line of data, and a blank line.
   */
  public byte[] encode() {
    if (wire != null) {
      return java.util.Arrays.copyOfRange(wire, wireOffset, wireOffset + wireLength);
    }
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

  /** Equal when name and data are: an upstream event equals the one the gateway would make of it. */
  @Override
  public boolean equals(Object other) {
    return other instanceof SseEvent that && Objects.equals(event(), that.event())
        && Objects.equals(data(), that.data());
  }

  @Override
  public int hashCode() {
    return Objects.hash(event(), data());
  }

  @Override
  public String toString() {
    return "SseEvent[event=" + event() + ", data=" + data() + "]";
  }

  static boolean whitespace(byte b) {
    return b == ' ' || (b >= '\t' && b <= '\r') || (b >= 0x1c && b <= 0x1f);
  }

  private static int skipSpaces(byte[] bytes, int i, int to) {
    while (i < to && whitespace(bytes[i])) {
      i++;
    }
    return i;
  }

  private static int indexOf(byte[] bytes, int from, int to, byte[] key) {
    if (key.length < 2) {
      return key.length == 0 ? from : ByteScan.indexOf(bytes, from, to, key[0]);
    }
    // Found by its second byte, eight bytes at a time: a key's opening quote is everywhere in JSON.
    int last = to - key.length + 1; // where the second byte of a key that ends at to lies
    for (int i = from + 1; i <= last; ) {
      int at = ByteScan.indexOf(bytes, i, last + 1, key[1]);
      if (at < 0) {
        return -1;
      }
      if (java.util.Arrays.equals(bytes, at - 1, at - 1 + key.length, key, 0, key.length)) {
        return at - 1;
      }
      i = at + 1;
    }
    return -1;
  }

  private static boolean ascii(String text) {
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) >= 0x80) {
        return false;
      }
    }
    return true;
  }

  private static boolean equalsAscii(byte[] bytes, int from, int length, String text) {
    if (length != text.length()) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      if (bytes[from + i] != text.charAt(i)) {
        return false;
      }
    }
    return true;
  }
}
