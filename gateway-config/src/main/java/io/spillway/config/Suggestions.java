package io.spillway.config;

import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The wording shared by every "not one of these" problem: the allowed words sorted, and the nearest
 * one offered when the word written is a near miss ({@code capacityStreek}, {@code Gold}, {@code key}).
 */
final class Suggestions {
  private Suggestions() {}

  /** {@code " (known keys here: a, b, c; did you mean 'b'?)"}, or {@code ""} with nothing known. */
  static String knownKeys(String written, Collection<String> known) {
    if (known.isEmpty()) {
      return "";
    }
    return " (known keys here: " + String.join(", ", sorted(known)) + didYouMean(written, known, "; ") + ")";
  }

  /** {@code "; did you mean 'b'?"} (with the given separator first), or {@code ""} when nothing is near. */
  static String didYouMean(String written, Collection<String> known, String separator) {
    return nearest(written, known).map(near -> separator + "did you mean '" + near + "'?").orElse("");
  }

  static List<String> sorted(Collection<String> words) {
    return words.stream().sorted(String.CASE_INSENSITIVE_ORDER).toList();
  }

  /**
   * The known word closest to {@code written}: the same word in other case, or one at most two edits
   * away (one for words of four letters or fewer), the earliest in sorted order on a tie.
   */
  static Optional<String> nearest(String written, Collection<String> known) {
    if (written == null || written.isEmpty()) {
      return Optional.empty();
    }
    String lower = written.toLowerCase(Locale.ROOT);
    int allowed = written.length() <= 4 ? 1 : 2;
    return sorted(known).stream()
        .filter(word -> !word.equals(written))
        .map(word -> new Candidate(word, word.toLowerCase(Locale.ROOT).equals(lower) ? 0 : distance(lower,
            word.toLowerCase(Locale.ROOT))))
        .filter(candidate -> candidate.distance() <= allowed)
        .min(Comparator.comparingInt(Candidate::distance))
        .map(Candidate::word);
  }

  private record Candidate(String word, int distance) {}

  /** Edit distance (insert, delete, replace, swap of neighbours). */
  static int distance(String a, String b) {
    int[][] d = new int[a.length() + 1][b.length() + 1];
    for (int i = 0; i <= a.length(); i++) {
      d[i][0] = i;
    }
    for (int j = 0; j <= b.length(); j++) {
      d[0][j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length()][b.length()];
  }
}
