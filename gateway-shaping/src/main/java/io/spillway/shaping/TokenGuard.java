package io.spillway.shaping;

import io.spillway.core.tokens.TokenTally;
import java.util.function.ObjLongConsumer;

/**
 * Keeps a trimmed text only when it really has fewer tokens than the original. The check is exact
 * and cheap: the result is counted, and the original is tokenized only until it is known to be longer.
 */
final class TokenGuard {
  private TokenGuard() {}

  /**
   * {@code trimmed} when it has fewer tokens than {@code original} (then {@code kept} gets the
   * original and the trimmed count), else {@code original}.
   */
  static String fewerTokens(String original, String trimmed, TokenTally counter, ObjLongConsumer<String> kept) {
    if (trimmed == original) {
      return original;
    }
    long after = counter.count(trimmed);
    if (!counter.exceeds(original, (int) Math.min(Integer.MAX_VALUE, after))) {
      return original;
    }
    kept.accept(original, after);
    return trimmed;
  }
}
