package io.spillway.trim;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;

/**
 * Trims one block of code (no Markdown fences inside): keeps the last lines, the last definitions,
 * the definitions a stack trace names (with the headers of the classes around them), every stack
 * trace line and the very last line; drops blank and comment-only lines; marks each cut with one
 * marker line.
 *
 * <p>Every part keeps whole, brace-balanced pieces (a long definition is cut where its own nesting
 * is closed, and keeps its closing line), so the result parses the same way again: trimming it once
 * more keeps the same lines. {@link #trim} still repeats until nothing changes, which makes that a
 * guarantee rather than a hope. Each pass is linear in the number of lines.
 */
final class BlockTrimmer {
  /** Passes after which trimming stops even if it still changes (it converges in one or two). */
  private static final int MAX_PASSES = 4;
  /** Lines a definition header may take before its body opens (multi-line signatures). */
  private static final int MAX_SIGNATURE_LINES = 8;

  private static final byte BLANK = 0;
  private static final byte COMMENT = 1;
  private static final byte CODE = 2;
  private static final byte MARKER = 3;

  private BlockTrimmer() {}

  /** The trimmed lines, or null when trimming would not change the block. */
  static String[] trim(String[] lines, Language language, TrimSettings settings) {
    String[] current = lines;
    boolean changed = false;
    for (int pass = 0; pass < MAX_PASSES; pass++) {
      String[] next = trimOnce(current, language, settings);
      if (next == null) {
        break;
      }
      current = next;
      changed = true;
    }
    return changed ? current : null;
  }

  static String[] trimOnce(String[] lines, Language language, TrimSettings settings) {
    int n = lines.length;
    if (n == 0) {
      return null;
    }
    StackTraces traces = StackTraces.find(lines);
    byte[] kind = new byte[n];
    int[] depthAfter = new int[n];
    boolean[] codeAfter = new boolean[n];
    boolean[] startsInCode = new boolean[n];
    LineScanner scanner = new LineScanner(language);
    Tracker definitions = new Tracker(language);
    int codeLines = 0;
    for (int i = 0; i < n; i++) {
      String line = lines[i];
      startsInCode[i] = scanner.inCode();
      if (traces.trace[i]) {
        kind[i] = CODE;
      } else if (isMarker(line, settings.marker())) {
        kind[i] = MARKER;
      } else if (line.isBlank()) {
        kind[i] = scanner.inString() ? CODE : BLANK;
      } else {
        int depthBefore = scanner.depth;
        scanner.scan(line);
        if (scanner.hasCode) {
          kind[i] = CODE;
          codeLines++;
          definitions.line(i, line, depthBefore, scanner);
        } else {
          kind[i] = scanner.hasComment ? COMMENT : BLANK;
        }
      }
      depthAfter[i] = scanner.depth;
      codeAfter[i] = scanner.inCode();
    }
    definitions.finish();
    if (codeLines <= settings.keepLastLines()) {
      return null;
    }

    boolean[] keep = new boolean[n];
    for (int i = 0; i < n; i++) {
      if (traces.trace[i]) {
        keep[i] = true;
      }
    }
    keep[n - 1] = true;
    keepLastLines(kind, traces.trace, startsInCode, keep, settings.keepLastLines());

    List<Def> chosen = chooseDefinitions(definitions.all, traces.frames, settings);
    for (Def def : chosen) {
      keepDefinition(def, kind, depthAfter, codeAfter, keep, settings.maxDefinitionLines());
      for (Def outer = def.parent; outer != null; outer = outer.parent) {
        keepRange(outer.start, outer.open, kind, keep);
      }
    }
    return render(lines, kind, keep, settings.marker());
  }

  static boolean isMarker(String line, String marker) {
    int b = firstNonSpace(line);
    if (!line.startsWith(marker, b)) {
      return false;
    }
    for (int i = b + marker.length(); i < line.length(); i++) {
      if (!Character.isWhitespace(line.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  static int firstNonSpace(String line) {
    int i = 0;
    while (i < line.length() && (line.charAt(i) == ' ' || line.charAt(i) == '\t')) {
      i++;
    }
    return i;
  }

  /** The last {@code count} code lines that are not part of a trace, never starting inside a string. */
  private static void keepLastLines(byte[] kind, boolean[] trace, boolean[] startsInCode, boolean[] keep, int count) {
    int kept = 0;
    int i = kind.length - 1;
    for (; i >= 0 && kept < count; i--) {
      if (kind[i] == CODE && !trace[i]) {
        keep[i] = true;
        kept++;
      }
    }
    // i + 1 is the first kept line; widen until it does not start inside a string or comment.
    for (int first = i + 1; first > 0 && !startsInCode[first]; first--) {
      if (kind[first - 1] == CODE) {
        keep[first - 1] = true;
      }
    }
  }

  /** The last definitions, then those the stack traces name (innermost frame first). */
  private static List<Def> chooseDefinitions(List<Def> all, List<StackTraces.FrameName> frames, TrimSettings settings) {
    List<Def> leaves = new ArrayList<>();
    for (Def def : all) {
      if (!def.isContainer()) {
        leaves.add(def);
      }
    }
    List<Def> chosen = new ArrayList<>();
    for (int i = Math.max(0, leaves.size() - settings.keepDefinitions()); i < leaves.size(); i++) {
      chosen.add(leaves.get(i));
    }
    int added = 0;
    for (StackTraces.FrameName frame : frames) {
      if (added >= settings.keepTraceDefinitions()) {
        break;
      }
      Def match = null;
      for (int i = leaves.size() - 1; i >= 0; i--) {
        Def def = leaves.get(i);
        if (!def.name.equals(frame.name())) {
          continue;
        }
        if (match == null) {
          match = def;
        }
        if (frame.qualifier() != null && frame.qualifier().equals(def.qualifier)) {
          match = def;
          break;
        }
      }
      if (match != null && !chosen.contains(match)) {
        chosen.add(match);
        added++;
      }
    }
    return chosen;
  }

  /**
   * A definition whole, or — when longer than {@code max} code lines — its head up to a line where
   * its own nesting is closed, plus its last line, so that braces stay balanced.
   */
  private static void keepDefinition(Def def, byte[] kind, int[] depthAfter, boolean[] codeAfter, boolean[] keep,
      int max) {
    int codeInSpan = 0;
    for (int i = def.start; i <= def.end; i++) {
      if (kind[i] == CODE) {
        codeInSpan++;
      }
    }
    if (codeInSpan <= max) {
      keepRange(def.start, def.end, kind, keep);
      return;
    }
    keepRange(def.start, def.open, kind, keep);
    int count = 0;
    for (int i = def.start; i <= def.open; i++) {
      if (kind[i] == CODE) {
        count++;
      }
    }
    int cut = def.open;
    for (int i = def.open + 1; i < def.end && count < max - 1; i++) {
      if (kind[i] != CODE) {
        continue;
      }
      count++;
      if (codeAfter[i] && (def.bodyDepth < 0 || depthAfter[i] == def.bodyDepth)) {
        cut = i;
      }
    }
    keepRange(def.open + 1, cut, kind, keep);
    if (kind[def.end] == CODE) {
      keep[def.end] = true;
    }
  }

  private static void keepRange(int from, int to, byte[] kind, boolean[] keep) {
    for (int i = from; i <= to; i++) {
      if (kind[i] == CODE) {
        keep[i] = true;
      }
    }
  }

  /** The kept lines with one marker per run of dropped code; null when nothing was dropped. */
  private static String[] render(String[] lines, byte[] kind, boolean[] keep, String marker) {
    List<String> out = new ArrayList<>(Math.min(lines.length, 1024));
    boolean gap = false;
    boolean dropped = false;
    String markerLine = lines[0].endsWith("\r") ? marker + "\r" : marker;
    for (int i = 0; i < lines.length; i++) {
      if (keep[i]) {
        if (gap) {
          out.add(markerLine);
          gap = false;
        }
        out.add(lines[i]);
      } else {
        dropped = true;
        if (kind[i] == CODE || kind[i] == MARKER) {
          gap = true;
        }
      }
    }
    if (gap) {
      out.add(markerLine);
    }
    if (!dropped || out.size() == lines.length && out.equals(Arrays.asList(lines))) {
      return null;
    }
    return out.toArray(String[]::new);
  }

  /** A definition found in the block. */
  static final class Def {
    final String name;
    final String qualifier;
    final boolean typeLike;
    /** First line, with its decorators or annotations. */
    final int start;
    /** Last line of the header: where its body opens. */
    int open;
    int end = -1;
    final int headerDepth;
    int bodyDepth = -1;
    final int indent;
    final Def parent;
    boolean hasChildren;

    Def(Definitions.Header header, int start, int line, int headerDepth, int indent, Def parent) {
      this.name = header.name();
      this.typeLike = header.typeLike();
      this.start = start;
      this.open = line;
      this.headerDepth = headerDepth;
      this.indent = indent;
      this.parent = parent;
      this.qualifier = header.qualifier() != null ? header.qualifier() : parent != null ? parent.name : null;
    }

    boolean isContainer() {
      return typeLike && hasChildren;
    }
  }

  /** Finds definitions and their extents while the block is scanned, one line at a time. */
  static final class Tracker {
    final List<Def> all = new ArrayList<>();
    private final Language language;
    private final Deque<Def> open = new ArrayDeque<>();
    private Def pending;
    private Definitions.Header pendingHeader;
    private int pendingLines;
    private boolean pendingComplete;
    private int annotationStart = -1;
    private int annotationIndent = -1;
    private int lastCode = -1;

    Tracker(Language language) {
      this.language = language;
    }

    void line(int i, String line, int depthBefore, LineScanner scanner) {
      switch (language.blocks) {
        case INDENT -> indentLine(i, line, scanner);
        case STATEMENTS -> statementLine(i, line, scanner);
        case BRACES -> braceLine(i, line, depthBefore, scanner);
      }
      lastCode = i;
    }

    void finish() {
      if (pending != null && language.blocks == Language.Blocks.STATEMENTS) {
        pending.end = lastCode;
        pending = null;
      }
      while (!open.isEmpty()) {
        open.pop().end = lastCode;
      }
    }

    private boolean isAnnotation(String s) {
      return switch (language) {
        case PYTHON, JAVA, KOTLIN, JAVASCRIPT -> s.startsWith("@") && !s.startsWith("@interface");
        case CSHARP -> s.startsWith("[") && s.endsWith("]");
        case RUST -> s.startsWith("#[");
        case C -> s.startsWith("[[") || s.startsWith("template");
        default -> false;
      };
    }

    private int startFor(int i, int indent) {
      return annotationStart >= 0 && (language != Language.PYTHON || annotationIndent == indent) ? annotationStart : i;
    }

    private void add(Def def) {
      all.add(def);
      if (def.parent != null) {
        def.parent.hasChildren = true;
      }
    }

    private void braceLine(int i, String line, int depthBefore, LineScanner scanner) {
      int b = firstNonSpace(line);
      if (pending != null && pendingComplete && !continuesHeader(line.strip())) {
        // The header ended without a body: a declaration, or a class without braces (Kotlin).
        pending = null;
      }
      Def top = open.peek();
      boolean inType = top != null && top.typeLike && depthBefore == top.bodyDepth;
      if (pending == null && scanner.startedInCode && mayStartDefinition(line, b, inType, depthBefore == 0)) {
        String s = line.strip();
        Definitions.Header header = Definitions.header(language, s, inType, depthBefore == 0);
        if (header != null) {
          Def def = new Def(header, startFor(i, -1), i, depthBefore, -1, top);
          annotationStart = -1;
          if (header.expression() && scanner.maxDepth <= depthBefore && !continues(scanner.lastCodeChar)) {
            def.end = i;
            add(def);
          } else {
            pending = def;
            pendingHeader = header;
            pendingLines = 0;
          }
        } else if (isAnnotation(s)) {
          if (annotationStart < 0) {
            annotationStart = i;
          }
        } else {
          annotationStart = -1;
        }
      } else if (pending == null) {
        annotationStart = -1;
      }
      if (pending != null) {
        if (scanner.maxDepth > pending.headerDepth) {
          pending.open = i;
          add(pending);
          if (scanner.depth <= pending.headerDepth) {
            pending.end = i;
          } else {
            pending.bodyDepth = pending.headerDepth + 1;
            open.push(pending);
          }
          pending = null;
        } else if (scanner.statementEnd && scanner.depth == pending.headerDepth
            || ++pendingLines > MAX_SIGNATURE_LINES) {
          if (pendingHeader.expression() && scanner.statementEnd) {
            pending.end = i;
            pending.open = i;
            add(pending);
          }
          pending = null;
        } else {
          pendingComplete = scanner.brackets == 0 && !continues(scanner.lastCodeChar);
        }
        return;
      }
      while (!open.isEmpty() && scanner.depth <= open.peek().headerDepth) {
        open.pop().end = i;
      }
    }

    /** A line that carries on a header whose own line looked complete: Allman braces, throws clauses, return types. */
    private static boolean continuesHeader(String s) {
      return s.startsWith("{") || s.startsWith("throws ") || s.startsWith(":") || s.startsWith("->")
          || s.startsWith("where ") || s.startsWith("extends ") || s.startsWith("implements ") || s.startsWith("=")
          || s.startsWith(")") || s.startsWith("const") || s.startsWith("noexcept") || s.startsWith("override")
          || s.startsWith("&&") || s.startsWith("||");
    }

    /**
     * A cheap first look, so that most lines (statements in bodies) are never parsed as headers:
     * Java, Kotlin, C# and C define types and methods only at the top level or directly in a type;
     * the others start a definition with one of a few keywords.
     */
    private boolean mayStartDefinition(String line, int b, boolean inType, boolean topLevel) {
      if (b >= line.length()) {
        return false;
      }
      char c = line.charAt(b);
      return switch (language) {
        case JAVA, KOTLIN, CSHARP, C -> inType || topLevel;
        case GO -> c == 'f' || c == 't';
        case SHELL -> c == 'f' || line.indexOf("()", b) > 0;
        case JAVASCRIPT -> inType || c == 'e' || c == 'd' || c == 'a' || c == 'c' || c == 'i' || c == 'n' || c == 'm'
            || c == 'f' || c == 'l' || c == 'v' || c == '@';
        case RUST -> c == 'f' || c == 'p' || c == 'a' || c == 'c' || c == 'u' || c == 'e' || c == 'd' || c == 'i'
            || c == 's' || c == 't' || c == 'm' || c == '#';
        default -> true;
      };
    }

    private static boolean continues(char last) {
      return last == '(' || last == ',' || last == '=' || last == '>' || last == '\\';
    }

    private void indentLine(int i, String line, LineScanner scanner) {
      boolean continuation = scanner.bracketsAtStart > 0 || !scanner.startedInCode;
      if (continuation) {
        Def last = all.isEmpty() ? null : all.get(all.size() - 1);
        if (last != null && last.open == lastCode && lastCode >= 0) {
          last.open = i;
        }
        return;
      }
      int indent = StackTraces.indentOf(line);
      while (!open.isEmpty() && indent <= open.peek().indent) {
        open.pop().end = lastCode;
      }
      int b = firstNonSpace(line);
      char first = b < line.length() ? line.charAt(b) : ' ';
      if (first != '@' && first != 'd' && first != 'a' && first != 'c') {
        annotationStart = -1;
        return;
      }
      String s = line.strip();
      if (s.startsWith("@")) {
        if (annotationStart < 0 || annotationIndent != indent) {
          annotationStart = i;
          annotationIndent = indent;
        }
        return;
      }
      Definitions.Header header = Definitions.header(language, s, false, indent == 0);
      if (header != null) {
        Def def = new Def(header, startFor(i, indent), i, 0, indent, open.peek());
        add(def);
        open.push(def);
      }
      annotationStart = -1;
    }

    private void statementLine(int i, String line, LineScanner scanner) {
      int b = firstNonSpace(line);
      boolean create = line.regionMatches(true, b, "CREATE", 0, 6);
      boolean batch = line.length() - b <= 4;
      if (!create && pending == null || !create && !batch && !scanner.statementEnd) {
        return;
      }
      String s = line.strip();
      if (pending == null && scanner.startedInCode) {
        Definitions.Header header = Definitions.header(language, s, false, true);
        if (header != null) {
          pending = new Def(header, i, i, 0, -1, null);
          add(pending);
        }
      }
      if (pending != null) {
        boolean batchEnd = s.equalsIgnoreCase("GO") || s.equals("/") || s.equals("$$;");
        if (scanner.statementEnd && scanner.sqlBlocks == 0 && scanner.inCode() || batchEnd) {
          pending.end = i;
          pending = null;
        }
      }
    }
  }
}
