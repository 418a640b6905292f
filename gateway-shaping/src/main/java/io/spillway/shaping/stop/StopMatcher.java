package io.spillway.shaping.stop;

import java.util.List;

/**
 * Cuts one generated text at the first occurrence of any of a set of stop sequences, fed piece by
 * piece as it streams. Text that could be the start of a stop sequence is held back until the next
 * piece shows whether it is one, so a match split across pieces is still found and nothing after it
 * is ever handed out. Not thread-safe; one per choice of one response.
 */
final class StopMatcher {
  private final List<String> stops;
  private final StringBuilder held = new StringBuilder();
  private boolean stopped;
  private boolean done;

  StopMatcher(List<String> stops) {
    this.stops = stops;
  }

  /** Whether a stop sequence was found. */
  boolean stopped() {
    return stopped;
  }

  /** Whether this text is over: cut at a stop sequence, or finished and flushed. */
  boolean done() {
    return done;
  }

  /**
   * Takes the next piece; returns the text that may be handed out now (possibly empty). After a
   * match, {@link #stopped()} is true and every later piece returns "".
   */
  String feed(String piece) {
    if (stopped) {
      return "";
    }
    held.append(piece);
    int cut = firstMatch(held);
    if (cut >= 0) {
      String out = held.substring(0, cut);
      held.setLength(0);
      stopped = true;
      done = true;
      return out;
    }
    int keep = longestPartialMatch(held);
    String out = held.substring(0, held.length() - keep);
    held.delete(0, held.length() - keep);
    return out;
  }

  /** The text still held back: at the end of the output it is no match, so it is handed out. */
  String flush() {
    String out = held.toString();
    held.setLength(0);
    done = true;
    return out;
  }

  /** Cuts a whole text at once: the text before the first match, or the text itself. */
  static String cut(String text, List<String> stops) {
    int cut = firstMatch(text, stops);
    return cut >= 0 ? text.substring(0, cut) : text;
  }

  static int firstMatch(CharSequence text, List<String> stops) {
    int best = -1;
    String s = text.toString();
    for (String stop : stops) {
      int at = s.indexOf(stop);
      if (at >= 0 && (best < 0 || at < best)) {
        best = at;
      }
    }
    return best;
  }

  private int firstMatch(StringBuilder text) {
    int best = -1;
    for (String stop : stops) {
      int at = text.indexOf(stop);
      if (at >= 0 && (best < 0 || at < best)) {
        best = at;
      }
    }
    return best;
  }

  /** The length of the longest suffix of {@code text} that is a proper prefix of some stop sequence. */
  private int longestPartialMatch(StringBuilder text) {
    int best = 0;
    int n = text.length();
    for (String stop : stops) {
      int max = Math.min(stop.length() - 1, n);
      for (int k = max; k > best; k--) {
        if (regionEquals(text, n - k, stop, k)) {
          best = k;
          break;
        }
      }
    }
    return best;
  }

  private static boolean regionEquals(StringBuilder text, int from, String stop, int length) {
    for (int i = 0; i < length; i++) {
      if (text.charAt(from + i) != stop.charAt(i)) {
        return false;
      }
    }
    return true;
  }
}
