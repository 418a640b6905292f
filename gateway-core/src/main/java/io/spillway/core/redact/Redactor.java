package io.spillway.core.redact;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Replaces the gateway's own secrets (the cloud key, the admin token) with {@value #MARK} in text
 * that leaves the gateway, in every form a JSON string may spell them: plain, with any character
 * written as a {@code \}{@code uXXXX} escape (either case of hex digit), {@code /} as
 * {@code \/}, the short escapes ({@code \"}, {@code \\}, {@code \n}, ...), and any mix of these.
 * An upstream that echoes the key back, however its JSON writer escapes it, therefore never shows
 * it to a client or a log.
 *
 * <p>The scan looks at each character once and tries a match only where a secret's first
 * character or a backslash stands, so text without either costs one pass. Secrets shorter than
 * {@value #MIN_SECRET_LENGTH} characters are not redacted: they would match ordinary words.
 * Thread-safe; {@link #secrets} replaces what is redacted (a reloaded admin token), every text
 * being scanned for one set or the other as a whole.
 */
public final class Redactor {
  /** What a secret is replaced with. */
  public static final String MARK = "[redacted]";
  static final int MIN_SECRET_LENGTH = 8;

  /** Redacts nothing. */
  public static final Redactor NONE = new Redactor(Secrets.of(List.of()));

  /**
   * The secrets, whether all of them are ASCII (then bodies are scanned as bytes), and which
   * characters may start one (its first character, or the backslash of a JSON escape): most
   * characters of a body are passed over with one look at this table.
   */
  private record Secrets(String[] all, boolean ascii, boolean[] asciiStarts, boolean nonAsciiStarts) {
    static Secrets of(Collection<String> secrets) {
      Set<String> kept = new LinkedHashSet<>();
      for (String secret : secrets) {
        if (secret != null && secret.strip().length() >= MIN_SECRET_LENGTH) {
          kept.add(secret);
        }
      }
      List<String> list = new ArrayList<>(kept);
      boolean[] asciiStarts = new boolean[0x80];
      asciiStarts['\\'] = !list.isEmpty();
      boolean nonAsciiStarts = false;
      for (String secret : list) {
        char first = secret.charAt(0);
        if (first < 0x80) {
          asciiStarts[first] = true;
        } else {
          nonAsciiStarts = true;
        }
      }
      return new Secrets(list.toArray(String[]::new),
          list.stream().allMatch(s -> s.chars().allMatch(c -> c < 0x80)), asciiStarts, nonAsciiStarts);
    }

    /** Whether a secret may start with {@code c}. */
    boolean mayStartWith(char c) {
      return c < 0x80 ? asciiStarts[c] : nonAsciiStarts;
    }
  }

  private volatile Secrets current;

  private Redactor(Secrets secrets) {
    this.current = secrets;
  }

  /** A redactor for {@code secrets}; nulls, blanks and secrets too short to redact are left out. */
  public static Redactor of(Collection<String> secrets) {
    return new Redactor(Secrets.of(secrets));
  }

  /** From now on redacts {@code next} instead (same rules as {@link #of}); not on {@link #NONE}. */
  public void secrets(Collection<String> next) {
    if (this == NONE) {
      throw new UnsupportedOperationException("Redactor.NONE redacts nothing, always");
    }
    current = Secrets.of(next);
  }

  /** Whether there is nothing to redact now. */
  public boolean isEmpty() {
    return current.all().length == 0;
  }

  /** {@code text} with every secret replaced; the same instance when it holds none. */
  public String redact(String text) {
    Secrets secrets = current;
    if (text == null || secrets.all().length == 0) {
      return text;
    }
    StringBuilder out = redacted(text, secrets);
    return out == null ? text : out.toString();
  }

  /** A UTF-8 body with every secret replaced; the same array when it holds none. */
  public byte[] redact(byte[] utf8) {
    Secrets secrets = current;
    if (utf8 == null || secrets.all().length == 0) {
      return utf8;
    }
    if (!secrets.ascii()) {
      String text = new String(utf8, StandardCharsets.UTF_8);
      StringBuilder redacted = redacted(text, secrets);
      return redacted == null ? utf8 : redacted.toString().getBytes(StandardCharsets.UTF_8);
    }
    // ASCII secrets match the same in the bytes read one to a character (ISO-8859-1): the bytes of
    // other characters are all 0x80 and above, so they never match, and they are copied unchanged.
    Latin1 text = new Latin1(utf8, 0, utf8.length);
    StringBuilder out = redacted(text, secrets);
    return out == null ? utf8 : out.toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  /** Whether {@code text} holds a secret in any spelling. */
  public boolean contains(CharSequence text) {
    return holds(text, current);
  }

  /**
   * Whether the {@code length} UTF-8 bytes of {@code utf8} from {@code offset} hold a secret in any
   * spelling; with ASCII secrets read as they are, without decoding them.
   */
  public boolean contains(byte[] utf8, int offset, int length) {
    Secrets now = current;
    if (now.all().length == 0) {
      return false;
    }
    CharSequence text = now.ascii()
        ? new Latin1(utf8, offset, length) : new String(utf8, offset, length, StandardCharsets.UTF_8);
    return holds(text, now);
  }

  private static boolean holds(CharSequence text, Secrets secrets) {
    for (int i = 0; i < text.length(); i++) {
      if (matchAt(text, i, secrets) >= 0) {
        return true;
      }
    }
    return false;
  }

  /** The redacted text, or null when nothing matched. */
  private static StringBuilder redacted(CharSequence text, Secrets secrets) {
    StringBuilder out = null;
    int copied = 0;
    int n = text.length();
    for (int i = 0; i < n; ) {
      int end = matchAt(text, i, secrets);
      if (end < 0) {
        i++;
        continue;
      }
      if (out == null) {
        out = new StringBuilder(n);
      }
      out.append(text, copied, i).append(MARK);
      copied = end;
      i = end;
    }
    if (out != null) {
      out.append(text, copied, n);
    }
    return out;
  }

  /** Where a secret spelled from {@code start} ends, or -1. */
  private static int matchAt(CharSequence text, int start, Secrets secrets) {
    char first = text.charAt(start);
    if (!secrets.mayStartWith(first)) {
      return -1;
    }
    for (String secret : secrets.all()) {
      if (first == secret.charAt(0) || first == '\\') {
        int end = spelled(text, start, secret);
        if (end >= 0) {
          return end;
        }
      }
    }
    return -1;
  }

  /** Where {@code secret}, each character plain or JSON-escaped, ends if it starts at {@code at}; else -1. */
  static int spelled(CharSequence text, int at, String secret) {
    int p = at;
    int n = text.length();
    for (int k = 0; k < secret.length(); k++) {
      if (p >= n) {
        return -1;
      }
      char want = secret.charAt(k);
      char c = text.charAt(p);
      if (c != '\\') {
        if (c != want) {
          return -1;
        }
        p++;
        continue;
      }
      if (p + 1 >= n) {
        return -1;
      }
      char escape = text.charAt(p + 1);
      if (escape == 'u') {
        if (p + 6 > n || hex(text, p + 2) != want) {
          return -1;
        }
        p += 6;
      } else {
        if (unescaped(escape) != want) {
          return -1;
        }
        p += 2;
      }
    }
    return p;
  }

  /** The code unit of four hex digits at {@code at}, or -1. */
  private static int hex(CharSequence text, int at) {
    int value = 0;
    for (int i = at; i < at + 4; i++) {
      int digit = Character.digit(text.charAt(i), 16);
      if (digit < 0) {
        return -1;
      }
      value = value << 4 | digit;
    }
    return value;
  }

  private static int unescaped(char escape) {
    return switch (escape) {
      case '"', '\\', '/' -> escape;
      case 'b' -> '\b';
      case 'f' -> '\f';
      case 'n' -> '\n';
      case 'r' -> '\r';
      case 't' -> '\t';
      default -> -1;
    };
  }

  /** Bytes seen as ISO-8859-1 characters, without copying them. */
  private record Latin1(byte[] bytes, int offset, int length) implements CharSequence {
    @Override
    public char charAt(int index) {
      return (char) (bytes[offset + index] & 0xff);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return new String(bytes, offset + start, end - start, StandardCharsets.ISO_8859_1);
    }

    @Override
    public String toString() {
      return new String(bytes, offset, length, StandardCharsets.ISO_8859_1);
    }
  }
}
