package io.spillway.trim;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds error stack traces among lines: Python tracebacks, Java/Kotlin/C# and JavaScript stack
 * frames ({@code at ...}) with their exception line, Go panics, Rust panics and gdb/lldb backtraces.
 * Also collects the function names of the frames, innermost first, so the trimmer can keep the
 * failing functions. Each line is looked at once, with plain character checks.
 */
final class StackTraces {
  /** Which lines belong to a trace. */
  final boolean[] trace;
  /** Frames' function names (and their class or receiver, when the trace says), innermost first. */
  final List<FrameName> frames = new ArrayList<>();
  int traceLines;

  record FrameName(String qualifier, String name) {}

  private enum Mode {
    NONE,
    PYTHON,
    GO,
    RUST,
    SQL
  }

  private StackTraces(int lines) {
    trace = new boolean[lines];
  }

  static StackTraces find(String[] lines) {
    StackTraces traces = new StackTraces(lines.length);
    traces.scan(lines);
    return traces;
  }

  private void scan(String[] lines) {
    Mode mode = Mode.NONE;
    int rustLines = 0;
    int pythonIndent = 0;
    int previous = -1;
    // Python lists the outermost frame first, so its names are collected per trace and reversed.
    List<FrameName> pythonFrames = new ArrayList<>();
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      int b = BlockTrimmer.firstNonSpace(line);
      if (b >= line.length() || line.isBlank()) {
        continue;
      }
      if (mode == Mode.NONE && !mayStartTrace(line, b)) {
        previous = i;
        continue;
      }
      String s = line.strip();
      int indent = indentOf(line);
      switch (mode) {
        case PYTHON -> {
          if (s.startsWith("File \"")) {
            mark(i);
            FrameName frame = pythonFrame(s);
            if (frame != null) {
              pythonFrames.add(frame);
            }
          } else if (indent > pythonIndent || s.startsWith("During handling of the above exception")
              || s.startsWith("The above exception was the direct cause") || s.startsWith("Traceback (")
              || s.startsWith("[Previous line repeated") || s.startsWith("|") || s.startsWith("+")) {
            mark(i);
          } else {
            mark(i);
            mode = Mode.NONE;
            flushPython(pythonFrames);
          }
          previous = i;
          continue;
        }
        case GO -> {
          if (s.startsWith("goroutine ") || s.startsWith("created by ") || s.contains(".go:")
              || s.startsWith("[signal ") || s.startsWith("panic: ") || goCall(s)) {
            mark(i);
            if (goCall(s)) {
              addFrame(goFrame(s));
            }
            previous = i;
            continue;
          }
          if (s.startsWith("exit status ")) {
            mark(i);
            mode = Mode.NONE;
            previous = i;
            continue;
          }
          mode = Mode.NONE;
        }
        case RUST -> {
          rustLines++;
          if (s.startsWith("note:") || s.startsWith("stack backtrace:") || s.startsWith("at ")
              || rustFrameNumber(s) > 0 || rustLines == 1) {
            mark(i);
            if (rustFrameNumber(s) > 0) {
              addFrame(rustFrame(s, rustFrameNumber(s)));
            }
            previous = i;
            continue;
          }
          if (s.startsWith("error: process didn't exit successfully")) {
            mark(i);
            mode = Mode.NONE;
            previous = i;
            continue;
          }
          mode = Mode.NONE;
        }
        case SQL -> {
          if (s.startsWith("DETAIL:") || s.startsWith("HINT:") || s.startsWith("CONTEXT:") || s.startsWith("LINE ")
              || s.startsWith("QUERY:") || s.startsWith("PL/pgSQL function") || s.startsWith("SQL statement")
              || s.startsWith("^") || s.startsWith("WHERE:")) {
            mark(i);
            addFrame(sqlFrame(s));
            previous = i;
            continue;
          }
          mode = Mode.NONE;
        }
        case NONE -> {}
      }
      if (s.startsWith("Traceback (most recent call last)")) {
        mark(i);
        mode = Mode.PYTHON;
        pythonIndent = indent;
      } else if (s.startsWith("panic: ") || s.startsWith("fatal error: ")) {
        mark(i);
        mode = Mode.GO;
      } else if (s.startsWith("thread '") && s.contains("' panicked at")) {
        mark(i);
        mode = Mode.RUST;
        rustLines = 0;
      } else if (s.startsWith("ERROR:") || s.contains(": ERROR:") || s.startsWith("psql:") && s.contains("ERROR")) {
        mark(i);
        mode = Mode.SQL;
      } else if (isShellError(s)) {
        mark(i);
      } else if (isAtFrame(s) || isMoreFrames(s) || isNativeFrame(s)) {
        if (previous >= 0 && !trace[previous] && looksLikeExceptionLine(lines[previous].strip())) {
          mark(previous);
        }
        mark(i);
        addFrame(isAtFrame(s) ? atFrame(s) : isNativeFrame(s) ? nativeFrame(s) : null);
      } else if (previous >= 0 && trace[previous] && (s.startsWith("Caused by: ") || s.startsWith("Suppressed: ")
          || s.startsWith("--- End of") || s.startsWith("--- End of inner exception"))) {
        mark(i);
      }
      previous = i;
    }
    if (mode == Mode.PYTHON) {
      flushPython(pythonFrames);
    }
  }

  /** A first look that lets most lines of code through without a closer one. */
  private static boolean mayStartTrace(String line, int b) {
    return switch (line.charAt(b)) {
      case 'T', 'F', 'D', 'p', 'f', 't', 'a', '.', '#', 'E', 'C', 'S', '-', 'U' -> true;
      default -> line.indexOf(": ERROR:", b) >= 0 || line.indexOf(": line ", b) > 0;
    };
  }

  static int indentOf(String line) {
    int width = 0;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c == ' ') {
        width++;
      } else if (c == '\t') {
        width += 4;
      } else {
        break;
      }
    }
    return width;
  }

  private void mark(int i) {
    if (!trace[i]) {
      trace[i] = true;
      traceLines++;
    }
  }

  private void addFrame(FrameName frame) {
    if (frame != null && frame.name() != null && !frame.name().isEmpty()) {
      frames.add(frame);
    }
  }

  private void flushPython(List<FrameName> pythonFrames) {
    for (int i = pythonFrames.size() - 1; i >= 0; i--) {
      addFrame(pythonFrames.get(i));
    }
    pythonFrames.clear();
  }

  /** {@code at com.acme.Foo.bar(Foo.java:12)}, {@code at bar (/app/x.js:3:9)}, {@code at /app/x.js:3:9}. */
  static boolean isAtFrame(String s) {
    if (!s.startsWith("at ") || s.length() < 5) {
      return false;
    }
    if (s.endsWith(")") && s.indexOf('(') > 0) {
      return true;
    }
    if (s.contains(":line ")) {
      return true;
    }
    int colon = s.lastIndexOf(':');
    return colon > 3 && colon + 1 < s.length() && Character.isDigit(s.charAt(colon + 1));
  }

  /** Bash: {@code ./deploy.sh: line 44: kubectl: command not found}. */
  private static boolean isShellError(String s) {
    int at = s.indexOf(": line ");
    if (at <= 0 || s.indexOf(' ') < at) {
      return false;
    }
    int i = at + 7;
    int digits = 0;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
      digits++;
    }
    return digits > 0 && s.startsWith(": ", i);
  }

  /** PostgreSQL's {@code CONTEXT:  PL/pgSQL function transfer(bigint,numeric) line 7 at RAISE}. */
  private static FrameName sqlFrame(String s) {
    int at = s.indexOf("function ");
    if (at < 0) {
      return null;
    }
    int start = at + 9;
    int end = start;
    while (end < s.length() && (Character.isLetterOrDigit(s.charAt(end)) || s.charAt(end) == '_' || s.charAt(end) == '.')) {
      end++;
    }
    return end > start ? qualified(s.substring(start, end), ".") : null;
  }

  /** Java's {@code ... 12 more}. */
  private static boolean isMoreFrames(String s) {
    return s.startsWith("... ") && s.endsWith(" more");
  }

  /** gdb/lldb: {@code #0  0x000055d4 in parse (p=0x0) at parser.c:42} or {@code #1 parse () at x.c:3}. */
  private static boolean isNativeFrame(String s) {
    if (s.length() < 4 || s.charAt(0) != '#' || !Character.isDigit(s.charAt(1))) {
      return false;
    }
    int i = 1;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    return i < s.length() && s.charAt(i) == ' ' && (s.contains(" in ") || s.contains(" at ") || s.contains("0x"));
  }

  private static boolean looksLikeExceptionLine(String s) {
    return s.contains("Error") || s.contains("Exception") || s.contains("Throwable") || s.contains("panic")
        || s.startsWith("Uncaught") || s.startsWith("Unhandled") || s.startsWith("Caused by")
        || s.contains("error:") || s.contains("FATAL") || s.contains("Fatal") || s.contains("received signal")
        || s.contains("Segmentation fault");
  }

  /** A Go frame function line: {@code main.(*Server).handle(0xc000010000, ...)} or {@code main.main()}. */
  private static boolean goCall(String s) {
    if (!s.endsWith(")") || s.indexOf(' ') >= 0 && s.indexOf(' ') < s.indexOf('(')) {
      return false;
    }
    int paren = s.indexOf('(');
    if (paren == 0 && s.startsWith("(")) {
      return false;
    }
    int dot = s.indexOf('.');
    return dot > 0 && dot < s.length() - 1 && (paren < 0 || dot < paren || s.startsWith("main.("));
  }

  private static FrameName pythonFrame(String s) {
    int in = s.lastIndexOf(", in ");
    if (in < 0) {
      return null;
    }
    String name = s.substring(in + 5).strip();
    return name.startsWith("<") ? null : new FrameName(null, name);
  }

  /** {@code at com.acme.Orders.total(Orders.java:12)}, {@code at async Orders.total (x.js:3:9)}, C#'s {@code at A.B.C(...) in f.cs:line 3}. */
  private static FrameName atFrame(String s) {
    String rest = s.substring(3).strip();
    if (rest.startsWith("async ")) {
      rest = rest.substring(6);
    }
    if (rest.startsWith("new ")) {
      rest = rest.substring(4);
    }
    int end = rest.indexOf('(');
    int space = rest.indexOf(' ');
    if (space >= 0 && (end < 0 || space < end)) {
      end = space;
    }
    if (end <= 0) {
      return null;
    }
    return qualified(rest.substring(0, end), ".");
  }

  private static FrameName goFrame(String s) {
    int paren = s.lastIndexOf('(');
    String callee = paren > 0 ? s.substring(0, paren) : s;
    callee = callee.replace("(*", "").replace(")", "").replace("(", "");
    return qualified(callee, ".");
  }

  private static int rustFrameNumber(String s) {
    int i = 0;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    return i > 0 && i + 1 < s.length() && s.charAt(i) == ':' && s.charAt(i + 1) == ' ' ? i + 2 : 0;
  }

  private static FrameName rustFrame(String s, int start) {
    String path = s.substring(start).strip();
    List<String> parts = new ArrayList<>(List.of(path.split("::")));
    parts.removeIf(p -> p.isEmpty() || p.startsWith("{{") || p.startsWith("<") || isRustHash(p));
    if (parts.isEmpty()) {
      return null;
    }
    String name = parts.get(parts.size() - 1);
    return new FrameName(parts.size() > 1 ? parts.get(parts.size() - 2) : null, name);
  }

  private static boolean isRustHash(String p) {
    if (p.length() != 17 || p.charAt(0) != 'h') {
      return false;
    }
    for (int i = 1; i < p.length(); i++) {
      if (Character.digit(p.charAt(i), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  private static FrameName nativeFrame(String s) {
    int in = s.indexOf(" in ");
    String rest = in >= 0 ? s.substring(in + 4) : s.substring(s.indexOf(' ') + 1).strip();
    int end = rest.indexOf(' ');
    int paren = rest.indexOf('(');
    if (paren >= 0 && (end < 0 || paren < end)) {
      end = paren;
    }
    if (end <= 0) {
      return null;
    }
    return qualified(rest.substring(0, end), "::");
  }

  /** Splits {@code a.b.Cls.method} into ({@code Cls}, {@code method}), dropping lambda and generic noise. */
  private static FrameName qualified(String path, String separator) {
    String cleaned = path;
    int lt = cleaned.indexOf('<');
    if (lt > 0) {
      cleaned = cleaned.substring(0, lt);
    }
    if (cleaned.endsWith(".")) {
      cleaned = cleaned.substring(0, cleaned.length() - 1);
    }
    int sep = cleaned.lastIndexOf(separator);
    String name = sep >= 0 ? cleaned.substring(sep + separator.length()) : cleaned;
    String qualifier = null;
    if (sep > 0) {
      String before = cleaned.substring(0, sep);
      int prev = before.lastIndexOf(separator);
      qualifier = prev >= 0 ? before.substring(prev + separator.length()) : before;
    }
    if (name.startsWith("lambda$")) {
      name = name.substring(7);
    }
    int dollar = name.indexOf('$');
    if (dollar > 0) {
      name = name.substring(0, dollar);
    }
    if (qualifier != null) {
      int qd = qualifier.indexOf('$');
      if (qd > 0) {
        qualifier = qualifier.substring(0, qd);
      }
    }
    return new FrameName(qualifier, name);
  }
}
