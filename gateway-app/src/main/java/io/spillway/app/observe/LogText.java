package io.spillway.app.observe;

import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;

/**
 * Keeps characters that can forge or disguise a log line out of it as raw text: control characters,
 * line and paragraph separators (U+2028, U+2029: a line break to many log viewers and to
 * JavaScript), and format characters (bidirectional overrides such as U+202E, zero-width
 * characters). A model or team name carrying them is written with them escaped as {@code \}{@code
 * uXXXX}: in a JSON line as JSON escapes (the value reads back the same), in a text line as the six
 * characters.
 */
final class LogText {
  /** For the JSON line's generator. */
  static final CharacterEscapes JSON_ESCAPES = new CharacterEscapes() {
    private final int[] ascii = CharacterEscapes.standardAsciiEscapesForJSON();

    @Override
    public int[] getEscapeCodesForAscii() {
      return ascii;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      return hidden(ch) ? new SerializedString(escape(ch)) : null;
    }
  };

  private LogText() {}

  /** Whether a character must not reach the log as itself. */
  static boolean hidden(int ch) {
    int type = Character.getType(ch);
    return type == Character.CONTROL || type == Character.FORMAT || type == Character.LINE_SEPARATOR
        || type == Character.PARAGRAPH_SEPARATOR;
  }

  /** {@code text} with every {@link #hidden} character written as {@code \}{@code uXXXX}; null stays null. */
  static String escaped(String text) {
    if (text == null) {
      return null;
    }
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (hidden(c)) {
        if (out == null) {
          out = new StringBuilder(text.length() + 16).append(text, 0, i);
        }
        out.append(escape(c));
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? text : out.toString();
  }

  private static String escape(int ch) {
    return String.format("\\u%04X", ch);
  }
}
