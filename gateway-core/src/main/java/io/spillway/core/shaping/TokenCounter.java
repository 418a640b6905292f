package io.spillway.core.shaping;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;

/**
 * Exact token counts with jtokkit: {@code o200k_base} for the GPT-4o, GPT-4.1, GPT-5 and o-series
 * families (and models it does not know), {@code cl100k_base} for GPT-4 and GPT-3.5.
 *
 * <p>Counting is linear in the text and not free (tens of milliseconds for 100K tokens), so the
 * limit checks stop early: {@link #exceeds} tokenizes at most {@code limit + 1} tokens. Instances are
 * shared and thread-safe.
 */
public final class TokenCounter {
  private static final class Registry {
    static final EncodingRegistry INSTANCE = Encodings.newLazyEncodingRegistry();
  }

  private static final class O200k {
    static final TokenCounter INSTANCE = new TokenCounter(Registry.INSTANCE.getEncoding(EncodingType.O200K_BASE));
  }

  private static final class Cl100k {
    static final TokenCounter INSTANCE = new TokenCounter(Registry.INSTANCE.getEncoding(EncodingType.CL100K_BASE));
  }

  private final Encoding encoding;

  private TokenCounter(Encoding encoding) {
    this.encoding = encoding;
  }

  /** The counter for {@code model}'s tokenizer (by its name's prefix; unknown models count as o200k). */
  public static TokenCounter forModel(String model) {
    if (model != null && (model.startsWith("gpt-4") && !model.startsWith("gpt-4o") && !model.startsWith("gpt-4.")
        || model.startsWith("gpt-3.5") || model.startsWith("text-embedding") || model.startsWith("text-davinci"))) {
      return Cl100k.INSTANCE;
    }
    return O200k.INSTANCE;
  }

  /** Loads the tokenizer tables now (they take a moment the first time), on a background thread. */
  public static void warmUp() {
    Thread.ofVirtual().name("tokenizer-warm-up").start(() -> O200k.INSTANCE.count("warm up"));
  }

  public String encodingName() {
    return encoding.getName();
  }

  /** The exact token count of {@code text} (special tokens count as ordinary text). */
  public int count(String text) {
    return text.isEmpty() ? 0 : encoding.countTokensOrdinary(text);
  }

  /**
   * Whether {@code text} has more than {@code limit} tokens. Texts shorter in UTF-8 bytes than the
   * limit are answered without tokenizing (a token is at least one byte); otherwise at most
   * {@code limit + 1} tokens are produced.
   */
  public boolean exceeds(String text, int limit) {
    if (limit < 0) {
      return true;
    }
    if (utf8Length(text) <= limit) {
      return false;
    }
    return encoding.encodeOrdinary(text, limit + 1).getTokens().size() > limit;
  }

  /**
   * Whether {@code texts} together have more than {@code limit} tokens; tokenizes at most
   * {@code limit + 1} tokens in all, and nothing when their UTF-8 size is within the limit.
   */
  public boolean exceeds(Iterable<String> texts, int limit) {
    long bytes = 0;
    for (String text : texts) {
      bytes += utf8Length(text);
    }
    if (bytes <= limit) {
      return false;
    }
    long remaining = limit;
    for (String text : texts) {
      if (text.isEmpty()) {
        continue;
      }
      int budget = (int) Math.min(Integer.MAX_VALUE - 1, remaining + 1);
      remaining -= encoding.encodeOrdinary(text, budget).getTokens().size();
      if (remaining < 0) {
        return true;
      }
    }
    return false;
  }

  /** The length of {@code text} in UTF-8 bytes, without encoding it. */
  public static long utf8Length(CharSequence text) {
    long bytes = 0;
    int n = text.length();
    for (int i = 0; i < n; i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        bytes++;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(text.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }
}
