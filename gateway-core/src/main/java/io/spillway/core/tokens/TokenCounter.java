package io.spillway.core.tokens;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Exact token counts with jtokkit: {@code o200k_base} for the GPT-4o, GPT-4.1, GPT-5 and o-series
 * families (and models it does not know, local ones included), {@code cl100k_base} for GPT-4 and
 * GPT-3.5. Shaping and quota estimation both count with it, so they agree on every request.
 *
 * <p>Counting is linear in the text and not free (about a quarter of a microsecond per token here,
 * so tens of milliseconds for a long prompt): the limit checks stop early ({@link #exceeds}
 * tokenizes at most {@code limit + 1} tokens), and whole counts of texts of {@value #CACHED_FROM_CHARS} characters or more are remembered. A chat
 * client sends the whole conversation again on every turn, so without that memory each turn would
 * tokenize the entire history again; with it, only the new message costs tokenizing. The memory is
 * keyed by the text's {@link TextKey} (two independent hashes and the length), never the text
 * itself, so no prompt is kept by it; it holds at most {@value #CACHED_COUNTS} counts (about 5 MiB).
 * Instances are shared and thread-safe.
 */
public final class TokenCounter {
  private static final class Registry {
    static final EncodingRegistry INSTANCE = Encodings.newLazyEncodingRegistry();
  }

  private static final class O200k {
    static final TokenCounter INSTANCE = new TokenCounter(Registry.INSTANCE.getEncoding(EncodingType.O200K_BASE));

    static {
      o200kLoaded = true;
      O200K_LOADED.complete(null);
    }
  }

  /** Set once the o200k vocabulary (the one most models count with) is loaded. */
  private static volatile boolean o200kLoaded;
  /** Completes when the o200k vocabulary is loaded, or when loading it failed (then counting fails as before). */
  private static final CompletableFuture<Void> O200K_LOADED = new CompletableFuture<>();
  private static final AtomicBoolean O200K_LOADING = new AtomicBoolean();

  private static final class Cl100k {
    static final TokenCounter INSTANCE = new TokenCounter(Registry.INSTANCE.getEncoding(EncodingType.CL100K_BASE));
  }

  /** Shorter texts are tokenized each time: looking them up would cost about as much. */
  static final int CACHED_FROM_CHARS = 32;
  /** How many whole-text counts are remembered (least recently used go first). */
  static final int CACHED_COUNTS = 65_536;
  /** The most characters handed to the tokenizer at once (see {@link #countAtMost}). */
  static final int SLICE_CHARS = 8_192;

  private final Encoding encoding;
  private final Cache<TextKey, Integer> counts =
      Caffeine.newBuilder().maximumSize(CACHED_COUNTS).executor(Runnable::run).build();

  private TokenCounter(Encoding encoding) {
    this.encoding = encoding;
  }

  /**
   * The counter for {@code model}'s tokenizer, by its name's prefix, case and any {@code provider/}
   * prefix aside; models it does not know count as o200k.
   */
  public static TokenCounter forModel(String model) {
    if (model == null) {
      return O200k.INSTANCE;
    }
    String m = model.toLowerCase(Locale.ROOT);
    m = m.substring(m.lastIndexOf('/') + 1);
    if (m.startsWith("gpt-4") && !m.startsWith("gpt-4o") && !m.startsWith("gpt-4.")
        || m.startsWith("gpt-3.5") || m.startsWith("text-embedding") || m.startsWith("text-davinci")) {
      return Cl100k.INSTANCE;
    }
    return O200k.INSTANCE;
  }

  /**
   * Loads the o200k vocabulary now (about a second of CPU the first time) on a background platform
   * thread, so that it neither holds a virtual thread's carrier nor makes the first request wait;
   * once per JVM (later calls find it loading or loaded).
   */
  public static void warmUp() {
    if (O200K_LOADING.compareAndSet(false, true)) {
      Thread.ofPlatform().name("tokenizer-warm-up").daemon().start(() -> {
        try {
          O200k.INSTANCE.count("warm up");
        } finally {
          O200K_LOADED.complete(null); // a failed load: the requests it let through fail as they would have
        }
      });
    }
  }

  /**
   * Completes once the o200k vocabulary is loaded, starting the load ({@link #warmUp}) if nothing has:
   * a stage on an event loop waits for it with this instead of on the vocabulary's class
   * initialization, which would hold the loop, and every connection on it, for the whole load.
   */
  public static CompletionStage<Void> whenVocabularyLoaded() {
    if (!o200kLoaded) {
      warmUp();
    }
    return O200K_LOADED;
  }

  /**
   * Whether the o200k vocabulary is loaded. Until it is, a request that counts tokens with it (the
   * quota estimate and shaping of a chat, completion or responses request) waits for the load, which
   * {@link #warmUp} starts right after the listener is up (a request that came through a connection
   * waits off its event loop, see {@code ParseInterceptor}); nothing else waits for it, readiness
   * included ({@code /readyz} shows this as {@code tokenizer.loaded}).
   */
  public static boolean vocabularyLoaded() {
    return o200kLoaded;
  }

  public String encodingName() {
    return encoding.getName();
  }

  /**
   * A tally for one request's texts that tokenizes at most {@code maxExactChars} characters in all
   * and estimates the rest from their length (see {@link TokenTally}).
   */
  public TokenTally tally(long maxExactChars) {
    return new TokenTally(this, maxExactChars, null);
  }

  /**
   * A tally as {@link #tally(long)} that keys its texts with the request's {@code keys}, so a text
   * another stage already hashed is not hashed again.
   */
  public TokenTally tally(long maxExactChars, PromptKeys keys) {
    return new TokenTally(this, maxExactChars, keys);
  }

  /**
   * The exact token count of {@code text} (special tokens count as ordinary text). Its cost is
   * linear in the text's length; a request's texts should be counted through a {@link #tally},
   * which bounds it.
   */
  public int count(String text) {
    if (text.isEmpty()) {
      return 0;
    }
    int known = known(text);
    if (known >= 0) {
      return known;
    }
    int count = countAtMost(text, Integer.MAX_VALUE);
    remember(text, count);
    return count;
  }

  /** A whole count remembered for {@code text}, or -1. */
  int known(String text) {
    return text.length() < CACHED_FROM_CHARS ? -1 : known(TextKey.of(text));
  }

  /** A whole count remembered under {@code key}, or -1. */
  int known(TextKey key) {
    Integer known = counts.getIfPresent(key);
    return known == null ? -1 : known;
  }

  void remember(String text, int count) {
    if (text.length() >= CACHED_FROM_CHARS) {
      remember(TextKey.of(text), count);
    }
  }

  void remember(TextKey key, int count) {
    counts.put(key, count);
  }

  /**
   * The tokens of {@code text}, tokenizing it slice by slice and stopping once more than
   * {@code max} are found (the result is then some number above {@code max}). Slices are cut just
   * before a space that follows a word, where the tokenizer's own pieces end, so the count is the
   * whole text's; text without such a space for {@value #SLICE_CHARS} characters (one letter
   * repeated, say) is cut where the slice ends. Without slicing such a run is one piece,
   * and the tokenizer's work on one piece grows far faster than its length (hundreds of megabytes
   * for a few million characters).
   */
  int countAtMost(String text, int max) {
    int n = text.length();
    if (n <= SLICE_CHARS) {
      return max == Integer.MAX_VALUE
          ? encoding.countTokensOrdinary(text)
          : encoding.encodeOrdinary(text, max + 1).getTokens().size();
    }
    long total = 0;
    int start = 0;
    while (start < n && total <= max) {
      int end = sliceEnd(text, start);
      String slice = text.substring(start, end);
      long budget = (long) max - total + 1;
      total += max == Integer.MAX_VALUE
          ? encoding.countTokensOrdinary(slice)
          : encoding.encodeOrdinary(slice, (int) Math.min(Integer.MAX_VALUE, budget)).getTokens().size();
      start = end;
    }
    return (int) Math.min(Integer.MAX_VALUE, total);
  }

  /** Where the slice that starts at {@code start} ends. */
  static int sliceEnd(String text, int start) {
    int n = text.length();
    int end = start + SLICE_CHARS;
    if (end >= n) {
      return n;
    }
    for (int cut = end; cut > start + SLICE_CHARS / 2; cut--) {
      // Before a single space between a letter or digit and more text: the tokenizer's pieces
      // always end there (the space starts the next word's piece), so the count is unchanged.
      if (text.charAt(cut) == ' ' && cut + 1 < text.length() && Character.isLetterOrDigit(text.charAt(cut - 1))
          && !Character.isWhitespace(text.charAt(cut + 1))) {
        return cut;
      }
    }
    return Character.isLowSurrogate(text.charAt(end)) ? end - 1 : end;
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
    int known = known(text);
    if (known >= 0) {
      return known > limit;
    }
    return countAtMost(text, limit) > limit;
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
      int known = known(text);
      int budget = (int) Math.min(Integer.MAX_VALUE - 1, remaining);
      remaining -= known >= 0 ? known : countAtMost(text, budget);
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
