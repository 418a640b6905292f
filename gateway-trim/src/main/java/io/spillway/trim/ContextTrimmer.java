package io.spillway.trim;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts oversized code context down to what matters: the last lines, the last few definitions, the
 * definitions a stack trace names, and every stack trace; blank and comment-only lines go, and each
 * cut is marked with one line (by default {@code ... (context trimmed)}).
 *
 * <p>Markdown is respected: a fenced code block is trimmed inside its fences and the fence lines are
 * never touched, so a fence is never broken; prose outside fences is left alone. The language of a
 * block comes from its fence's info string ({@code ```go}) or is guessed from its lines.
 *
 * <p>Trimming is idempotent (trimming the result again changes nothing), keeps the last line of
 * every block as it was, and runs in time linear in the text. Instances are immutable and
 * thread-safe.
 */
public final class ContextTrimmer {
  private final TrimSettings settings;

  public ContextTrimmer(TrimSettings settings) {
    this.settings = settings;
  }

  public TrimSettings settings() {
    return settings;
  }

  /**
   * Trims text that is code as a whole, such as a completions prompt. Fenced blocks in it are
   * trimmed separately. Returns {@code text} itself when nothing is cut.
   *
   * @param hint the language, or null to guess it
   */
  public String trimCode(String text, Language hint) {
    return trim(text, hint, true);
  }

  /**
   * Trims the code in a chat message: its fenced blocks, or the whole message when it has no fences
   * and reads as code (a pasted file, a tool's output). Returns {@code text} itself when nothing is cut.
   */
  public String trimMessage(String text) {
    return trim(text, null, false);
  }

  private String trim(String text, Language hint, boolean wholeIsCode) {
    if (text == null || !hasMoreLinesThan(text, settings.keepLastLines())) {
      return text;
    }
    boolean endsWithNewline = text.endsWith("\n");
    String[] lines = (endsWithNewline ? text.substring(0, text.length() - 1) : text).split("\n", -1);
    List<String> out = new ArrayList<>(lines.length);
    boolean changed = false;
    boolean anyFence = false;
    int i = 0;
    while (i < lines.length) {
      Fence fence = Fence.opening(lines[i]);
      if (fence != null) {
        anyFence = true;
        int close = i + 1;
        while (close < lines.length && !fence.closedBy(lines[close])) {
          close++;
        }
        Language language = Language.fromFenceInfo(fence.info());
        out.add(lines[i]);
        changed |= trimBlock(lines, i + 1, close, language, out);
        if (close < lines.length) {
          out.add(lines[close]);
        }
        i = close + 1;
        continue;
      }
      int end = i + 1;
      while (end < lines.length && Fence.opening(lines[end]) == null) {
        end++;
      }
      boolean wholeMessage = i == 0 && end == lines.length;
      if (wholeIsCode || wholeMessage && !anyFence && looksLikeCode(lines, i, end)) {
        changed |= trimBlock(lines, i, end, hint, out);
      } else {
        for (int j = i; j < end; j++) {
          out.add(lines[j]);
        }
      }
      i = end;
    }
    if (!changed) {
      return text;
    }
    StringBuilder result = new StringBuilder(text.length() / 4);
    for (int j = 0; j < out.size(); j++) {
      if (j > 0) {
        result.append('\n');
      }
      result.append(out.get(j));
    }
    if (endsWithNewline) {
      result.append('\n');
    }
    return result.toString();
  }

  /** Trims lines [from, to) into {@code out}; true when anything was cut. */
  private boolean trimBlock(String[] lines, int from, int to, Language language, List<String> out) {
    if (to - from <= settings.keepLastLines()) {
      for (int j = from; j < to; j++) {
        out.add(lines[j]);
      }
      return false;
    }
    String[] block = new String[to - from];
    System.arraycopy(lines, from, block, 0, block.length);
    Language lang = language != null ? language : LanguageDetector.detect(block, 0, block.length);
    String[] trimmed = BlockTrimmer.trim(block, lang, settings);
    if (trimmed == null) {
      for (String line : block) {
        out.add(line);
      }
      return false;
    }
    for (String line : trimmed) {
      out.add(line);
    }
    return true;
  }

  private static boolean hasMoreLinesThan(String text, int count) {
    int lines = 1;
    for (int i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) {
      if (++lines > count) {
        return true;
      }
    }
    return false;
  }

  /** Most non-blank lines end or start the way code does. */
  static boolean looksLikeCode(String[] lines, int from, int to) {
    int nonBlank = 0;
    int code = 0;
    for (int i = from; i < to; i++) {
      String line = lines[i];
      String s = line.strip();
      if (s.isEmpty()) {
        continue;
      }
      nonBlank++;
      char last = s.charAt(s.length() - 1);
      char first = line.charAt(0);
      if (last == ';' || last == '{' || last == '}' || last == ')' || last == ':' || last == ',' || last == '('
          || last == ']' || first == ' ' || first == '\t' || s.startsWith("//") || s.startsWith("#")
          || s.startsWith("import ") || s.startsWith("at ")) {
        code++;
      }
    }
    return nonBlank > 0 && code * 10 >= nonBlank * 6;
  }

  /**
   * A Markdown code fence: three or more backticks or tildes, indented by at most three spaces (more
   * is an indented code block, like the {@code ~~~^~~~} markers under a Python traceback line).
   */
  record Fence(char ch, int length, String info) {
    private static final int MAX_INDENT = 3;

    static Fence opening(String line) {
      int i = 0;
      while (i < line.length() && line.charAt(i) == ' ') {
        i++;
      }
      if (i > MAX_INDENT || i >= line.length()) {
        return null;
      }
      char ch = line.charAt(i);
      if (ch != '`' && ch != '~') {
        return null;
      }
      int run = 0;
      while (i + run < line.length() && line.charAt(i + run) == ch) {
        run++;
      }
      if (run < 3) {
        return null;
      }
      String info = line.substring(i + run).strip();
      if (ch == '`' && info.indexOf('`') >= 0) {
        return null;
      }
      return new Fence(ch, run, info);
    }

    boolean closedBy(String line) {
      int i = 0;
      while (i < line.length() && line.charAt(i) == ' ') {
        i++;
      }
      if (i > MAX_INDENT) {
        return false;
      }
      int run = 0;
      while (i + run < line.length() && line.charAt(i + run) == ch) {
        run++;
      }
      return run >= length && line.substring(i + run).isBlank();
    }
  }
}
