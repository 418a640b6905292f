package io.spillway.shaping.signal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.spillway.config.ShapingConfig;
import io.spillway.core.tokens.TextKey;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * Tells low-signal requests from the rest: requests that are likely to waste capacity, so the
 * admission queue serves them last. A request is low-signal when its text has
 *
 * <ul>
 *   <li>more than {@code maxNestedLoops} loops nested in each other, none with a {@code break} or
 *       {@code return} (judged by indentation, so it works for any language);
 *   <li>a base64-looking string longer than {@code base64MinChars} (one run, or a block of wrapped
 *       lines as in PEM or MIME);
 *   <li>{@code placeholderRepeats} or more identical placeholder lines ({@code // TODO: implement},
 *       {@code pass  # TODO}, {@code todo!()}, {@code raise NotImplementedError}, ...);
 * </ul>
 *
 * or asks for {@code temperature > hotTemperature} with an output limit above {@code hotMaxTokens}.
 *
 * <p>One pass over each text, character by character, no regular expressions. What a text's pass
 * found does not depend on the texts before it (the placeholder counts that do are added up after),
 * so it is remembered by the text's {@link TextKey} ({@code shaping.signal.memoEntries} of them, least
 * recently used first out): an agent's turn, which repeats its instructions, tools and earlier
 * messages, has only its new texts scanned. Thread-safe.
 */
public final class SignalScorer {
  /** Lines of at least this many base64 characters and nothing else count as a wrapped blob. */
  private static final int WRAPPED_LINE = 40;
  private static final boolean[] BASE64 = new boolean[128];

  static {
    for (char c = 'A'; c <= 'Z'; c++) {
      BASE64[c] = true;
    }
    for (char c = 'a'; c <= 'z'; c++) {
      BASE64[c] = true;
    }
    for (char c = '0'; c <= '9'; c++) {
      BASE64[c] = true;
    }
    BASE64['+'] = true;
    BASE64['/'] = true;
    BASE64['='] = true;
    BASE64['-'] = true;
    BASE64['_'] = true;
  }

  /** Why a request is low-signal; the value is the reason as logged and counted. */
  public enum Reason {
    NESTED_LOOPS("nested-loops"),
    BASE64("base64"),
    PLACEHOLDERS("placeholders"),
    HOT_SAMPLING("hot-sampling");

    private final String tag;

    Reason(String tag) {
      this.tag = tag;
    }

    public String tag() {
      return tag;
    }
  }

  /** Shorter texts are scanned each time: remembering them would cost about as much. */
  static final int MEMO_FROM_CHARS = 64;

  private final ShapingConfig.SignalConfig config;
  /** Each scanned text's findings by its key; null when {@code memoEntries} is 0. */
  private final Cache<TextKey, TextSignals> memo;

  public SignalScorer(ShapingConfig.SignalConfig config) {
    this.config = config;
    this.memo = config.memoEntries() > 0
        ? Caffeine.newBuilder().maximumSize(config.memoEntries()).executor(Runnable::run).build()
        : null;
  }

  /**
   * The reason {@code texts} with these sampling parameters are low-signal, or null when they are not.
   *
   * @param temperature the request's temperature, or null
   * @param maxTokens the request's output limit, or 0 when it sets none
   */
  public Reason score(Iterable<String> texts, Double temperature, long maxTokens) {
    return score(texts, TextKey::of, temperature, maxTokens);
  }

  /**
   * As {@link #score(Iterable, Double, long)}, with the texts' keys from {@code keys} (the request's
   * {@link io.spillway.core.tokens.PromptKeys}, so a text is hashed once per request).
   */
  public Reason score(Iterable<String> texts, Function<String, TextKey> keys, Double temperature, long maxTokens) {
    if (temperature != null && temperature > config.hotTemperature() && maxTokens > config.hotMaxTokens()) {
      return Reason.HOT_SAMPLING;
    }
    Map<String, Integer> placeholders = null;
    for (String text : texts) {
      TextSignals found = signals(text, keys);
      if (found.placeholders() != null) {
        if (placeholders == null) {
          placeholders = new HashMap<>();
        }
        for (Map.Entry<String, Integer> seen : found.placeholders().entrySet()) {
          if (placeholders.merge(seen.getKey(), seen.getValue(), Integer::sum) >= config.placeholderRepeats()) {
            return Reason.PLACEHOLDERS;
          }
        }
      }
      if (found.stop() != null) {
        return found.stop();
      }
    }
    return null;
  }

  private TextSignals signals(String text, Function<String, TextKey> keys) {
    if (memo == null || text.length() < MEMO_FROM_CHARS) {
      return new Scan().text(text);
    }
    TextKey key = keys.apply(text);
    TextSignals found = memo.getIfPresent(key);
    if (found == null) {
      found = new Scan().text(text);
      memo.put(key, found);
    }
    return found;
  }

  /**
   * What one text's pass found, whatever came before it: the placeholder lines it holds before its
   * first finding (each fewer than {@code placeholderRepeats} times; null when none), and that
   * finding ({@link Reason#PLACEHOLDERS} when the text alone repeats one often enough), or null.
   * A request's texts are added up in order: its placeholder counts first, then its finding.
   */
  record TextSignals(Reason stop, Map<String, Integer> placeholders) {
    static final TextSignals NOTHING = new TextSignals(null, null);

    static TextSignals of(Reason stop, Map<String, Integer> placeholders) {
      return stop == null && placeholders == null ? NOTHING : new TextSignals(stop, placeholders);
    }
  }

  /** One text's pass. */
  private final class Scan {
    private Map<String, Integer> placeholders;

    private TextSignals found(Reason reason) {
      return TextSignals.of(reason, placeholders == null ? null : Map.copyOf(placeholders));
    }

    TextSignals text(String text) {
      Loops loops = new Loops(config.maxNestedLoops());
      long blob = 0;
      int n = text.length();
      int start = 0;
      while (start <= n) {
        int end = text.indexOf('\n', start);
        if (end < 0) {
          end = n;
        }
        // Base64: runs within the line, and whole lines of it one after another.
        int run = 0;
        boolean digit = false;
        boolean upper = false;
        boolean lower = false;
        int lineRun = 0;
        int lineLength = end - start;
        for (int i = start; i < end; i++) {
          char c = text.charAt(i);
          if (c < 128 && BASE64[c]) {
            run++;
            lineRun++;
            digit |= c >= '0' && c <= '9';
            upper |= c >= 'A' && c <= 'Z';
            lower |= c >= 'a' && c <= 'z';
            if (run > config.base64MinChars() && digit && upper && lower) {
              return found(Reason.BASE64);
            }
          } else {
            if (c != '\r') {
              run = 0;
              digit = upper = lower = false;
            }
          }
        }
        boolean wrapped = lineRun >= WRAPPED_LINE && lineRun >= lineLength - (lineLength > 0 && text.charAt(end - 1) == '\r' ? 1 : 0);
        blob = wrapped ? blob + lineRun : 0;
        if (blob > config.base64MinChars() && wrapped && digit && upper && lower) {
          return found(Reason.BASE64);
        }
        if (lineLength > 0) {
          if (loops.line(text, start, end)) {
            return found(Reason.NESTED_LOOPS);
          }
          String placeholder = placeholder(text, start, end);
          if (placeholder != null) {
            if (placeholders == null) {
              placeholders = new HashMap<>();
            }
            if (placeholders.merge(placeholder, 1, Integer::sum) >= config.placeholderRepeats()) {
              placeholders = null; // repeated often enough in this text alone, whatever came before
              return found(Reason.PLACEHOLDERS);
            }
          }
        }
        start = end + 1;
      }
      return found(loops.finish() ? Reason.NESTED_LOOPS : null);
    }
  }

  /**
   * Loop nesting by indentation: a loop line opens a level that lasts while the following lines are
   * indented deeper. When a whole nest closes, it was wasteful if it went deeper than the limit and
   * nothing in it could leave early.
   */
  private static final class Loops {
    private final int max;
    private final int[] indents = new int[64];
    private int depth;
    private int nestDepth;
    private boolean nestExits;

    Loops(int max) {
      this.max = max;
    }

    /** Returns true when a closed nest was wasteful. */
    boolean line(String text, int start, int end) {
      int indent = 0;
      int i = start;
      for (; i < end; i++) {
        char c = text.charAt(i);
        if (c == ' ') {
          indent++;
        } else if (c == '\t') {
          indent += 4;
        } else {
          break;
        }
      }
      if (i >= end || text.charAt(i) == '\r') {
        return false;
      }
      while (depth > 0 && indent <= indents[depth - 1]) {
        depth--;
        if (depth == 0 && closeNest()) {
          return true;
        }
      }
      if (depth > 0 && (startsWord(text, i, end, "break") || startsWord(text, i, end, "return"))) {
        nestExits = true;
      }
      if (isLoop(text, i, end)) {
        if (depth < indents.length) {
          indents[depth++] = indent;
        }
        nestDepth = Math.max(nestDepth, depth);
      }
      return false;
    }

    boolean finish() {
      return depth > 0 && closeNest();
    }

    private boolean closeNest() {
      boolean wasteful = nestDepth > max && !nestExits;
      depth = 0;
      nestDepth = 0;
      nestExits = false;
      return wasteful;
    }

    private static boolean isLoop(String text, int i, int end) {
      int last = end - 1;
      while (last > i && (text.charAt(last) == ' ' || text.charAt(last) == '\r' || text.charAt(last) == '\t')) {
        last--;
      }
      char tail = text.charAt(last);
      boolean opensBody = tail == '{' || tail == ':' || tail == ')' || text.startsWith("do", last - 1);
      if (!opensBody) {
        return false;
      }
      if (startsWord(text, i, end, "for")) {
        // Python's "for x in y:" or a C-family "for (" / Go's "for i := ...", not prose ("for example:").
        return tail != ':' || text.indexOf(" in ", i) > 0 && text.indexOf(" in ", i) < end;
      }
      return startsWord(text, i, end, "while") || startsWord(text, i, end, "foreach")
          || startsWord(text, i, end, "loop") || startsWord(text, i, end, "do");
    }
  }

  static boolean startsWord(String text, int i, int end, String word) {
    int after = i + word.length();
    if (after > end || !text.startsWith(word, i)) {
      return false;
    }
    return after == end || !Character.isLetterOrDigit(text.charAt(after)) && text.charAt(after) != '_';
  }

  /**
   * The normalised placeholder on this line, or null: a comment that only says TODO/FIXME/implement
   * (at most four words), or a stub statement such as {@code todo!()} or {@code raise NotImplementedError}.
   */
  static String placeholder(String text, int start, int end) {
    int b = start;
    while (b < end && Character.isWhitespace(text.charAt(b))) {
      b++;
    }
    if (b >= end) {
      return null;
    }
    // Most lines are neither comments nor stubs: look at how they start before copying anything.
    if (!mayBePlaceholder(text, b)) {
      return null;
    }
    String s = text.substring(b, end).strip();
    if (s.isEmpty() || s.length() > 120) {
      return null;
    }
    String lower = s.toLowerCase(Locale.ROOT);
    if (lower.startsWith("todo!(") || lower.startsWith("unimplemented!(") || lower.startsWith("raise notimplementederror")
        || lower.startsWith("throw new unsupportedoperationexception") || lower.startsWith("throw new notimplementedexception")
        || lower.startsWith("throw new error(\"not implemented") || lower.startsWith("throw new error('not implemented")
        || lower.equals("...") || lower.startsWith("pass  #") || lower.startsWith("pass #")) {
      return lower.startsWith("pass") ? "pass " + commentWords(lower.substring(lower.indexOf('#') + 1)) : lower;
    }
    String body;
    if (lower.startsWith("//") || lower.startsWith("--")) {
      body = lower.substring(2);
    } else if (lower.startsWith("#")) {
      body = lower.substring(1);
    } else if (lower.startsWith("/*")) {
      body = lower.substring(2).replace("*/", "");
    } else {
      return null;
    }
    String words = commentWords(body);
    if (words.isEmpty()) {
      return null;
    }
    boolean marker = words.startsWith("todo") || words.startsWith("fixme") || words.startsWith("implement")
        || words.startsWith("your code") || words.startsWith("code here") || words.startsWith("add code")
        || words.equals("...");
    int count = words.split(" ").length;
    return marker && count <= 4 ? words : null;
  }

  /** Whether the line that starts at {@code b} starts as a comment or one of the stubs above. */
  private static boolean mayBePlaceholder(String text, int b) {
    return switch (text.charAt(b)) {
      case '/', '#', '-', '.' -> true;
      case 't', 'T' -> text.regionMatches(true, b, "todo!(", 0, 6) || text.regionMatches(true, b, "throw new ", 0, 10);
      case 'u', 'U' -> text.regionMatches(true, b, "unimplemented!(", 0, 15);
      case 'r', 'R' -> text.regionMatches(true, b, "raise ", 0, 6);
      case 'p', 'P' -> text.regionMatches(true, b, "pass ", 0, 5);
      default -> false;
    };
  }

  private static String commentWords(String body) {
    StringBuilder out = new StringBuilder(body.length());
    boolean space = false;
    for (int i = 0; i < body.length(); i++) {
      char c = body.charAt(i);
      if (Character.isLetterOrDigit(c)) {
        if (space && !out.isEmpty()) {
          out.append(' ');
        }
        out.append(c);
        space = false;
      } else if (c == '.' && body.startsWith("...", i) && out.isEmpty()) {
        return "...";
      } else {
        space = true;
      }
    }
    return out.toString();
  }
}
