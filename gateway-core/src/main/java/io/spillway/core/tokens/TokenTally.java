package io.spillway.core.tokens;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;

/**
 * Counts the tokens of one request's texts at a bounded cost: at most {@code maxExactChars}
 * characters are handed to the tokenizer in all (remembered counts cost nothing); what lies beyond
 * is estimated from its length, at the tokens per character measured on what this tally has counted
 * so far (one token per four characters before anything was counted). A prompt of several megabytes
 * therefore costs as much to estimate as one of {@code maxExactChars} characters, whatever it holds;
 * the backend's reported usage settles the difference afterwards.
 *
 * <p>Not thread-safe: one tally per request for all of shaping (its stages share it on the request)
 * and one for the quota estimate ({@code shaping.maxTokenizedChars}).
 */
public final class TokenTally {
  /** Tokens per character assumed before anything was counted (OpenAI's rule of thumb). */
  private static final double DEFAULT_RATE = 0.25;

  private final TokenCounter counter;
  /** The request's text keys, or null to hash each text here. */
  private final PromptKeys keys;
  private long exactCharsLeft;
  private long countedChars;
  private long countedTokens;

  TokenTally(TokenCounter counter, long maxExactChars, PromptKeys keys) {
    this.counter = counter;
    this.keys = keys;
    this.exactCharsLeft = Math.max(0, maxExactChars);
  }

  /** The tokens of {@code text}: exact while the budget lasts, estimated beyond it. */
  public long count(String text) {
    return countAtMost(text, Integer.MAX_VALUE);
  }

  /**
   * The tokens of the JSON text of {@code value} (tool definitions, a response format) as Spillway's
   * mapper writes it. A value seen before is recognised by its {@link TextKey#ofJson structure} and
   * not written out again; otherwise it is written once and counted like any text.
   */
  public long countJson(JsonNode value) {
    TextKey key = keys != null ? keys.key(value) : TextKey.ofJson(value);
    int known = counter.known(key);
    if (known >= 0) {
      return known;
    }
    String text = Json.toString(value);
    if (text.isEmpty()) {
      return 0;
    }
    int length = text.length();
    if (length <= exactCharsLeft) {
      exactCharsLeft -= length;
      int tokens = counter.countAtMost(text, Integer.MAX_VALUE);
      counter.remember(key, tokens);
      measured(length, tokens);
      return tokens;
    }
    return countAtMost(text, Integer.MAX_VALUE);
  }

  /** Whether {@code text} has more than {@code limit} tokens (exact within the budget). */
  public boolean exceeds(String text, int limit) {
    if (limit < 0) {
      return true;
    }
    if (TokenCounter.utf8Length(text) <= limit) {
      return false;
    }
    return countAtMost(text, limit) > limit;
  }

  /** Whether {@code texts} together have more than {@code limit} tokens. */
  public boolean exceeds(Iterable<String> texts, int limit) {
    long bytes = 0;
    for (String text : texts) {
      bytes += TokenCounter.utf8Length(text);
    }
    if (bytes <= limit) {
      return false;
    }
    long remaining = limit;
    for (String text : texts) {
      remaining -= countAtMost(text, (int) Math.min(Integer.MAX_VALUE - 1, Math.max(0, remaining)));
      if (remaining < 0) {
        return true;
      }
    }
    return false;
  }

  /** The characters this tally may still hand to the tokenizer. */
  public long exactCharsLeft() {
    return exactCharsLeft;
  }

  /** The tokens of {@code text}, or some number above {@code max} once it is known to have more. */
  private long countAtMost(String text, int max) {
    if (text.isEmpty()) {
      return 0;
    }
    TextKey key = text.length() < TokenCounter.CACHED_FROM_CHARS ? null : keys != null ? keys.key(text) : TextKey.of(text);
    int known = key == null ? -1 : counter.known(key);
    if (known >= 0) {
      return known;
    }
    int length = text.length();
    if (length <= exactCharsLeft) {
      exactCharsLeft -= length;
      int tokens = counter.countAtMost(text, max);
      if (tokens <= max) {
        if (key != null) {
          counter.remember(key, tokens);
        }
        measured(length, tokens);
      }
      return tokens;
    }
    int exactPart = (int) exactCharsLeft;
    if (exactPart > 0 && Character.isHighSurrogate(text.charAt(exactPart - 1))) {
      exactPart--;
    }
    long tokens = 0;
    if (exactPart > 0) {
      tokens = counter.countAtMost(text.substring(0, exactPart), Integer.MAX_VALUE);
      measured(exactPart, tokens);
    }
    exactCharsLeft = 0;
    double rate = countedChars > 0 ? (double) countedTokens / countedChars : DEFAULT_RATE;
    return tokens + (long) Math.ceil((length - exactPart) * rate);
  }

  private void measured(long chars, long tokens) {
    countedChars += chars;
    countedTokens += tokens;
  }
}
