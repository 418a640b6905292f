package io.spillway.trim;

/**
 * Reads code line by line and tells, for each line, whether it holds code, only a comment, or
 * nothing, and how it changes the brace and bracket depth. Strings and comments are followed across
 * lines (block comments, triple-quoted and backtick strings, SQL dollar quotes), so braces and
 * comment markers inside them are not counted. One character at a time, no backtracking: linear in
 * the input. Not thread-safe; one scanner per block.
 */
final class LineScanner {
  private static final int CODE = 0;
  private static final int BLOCK_COMMENT = 1;
  private static final int STRING = 2;

  private final Language language;
  private int mode = CODE;
  private int commentDepth;
  private String closing;
  private boolean escapes;
  private boolean multiline;

  /** Brace depth after the last scanned line. */
  int depth;
  /** Round and square bracket depth after the last scanned line. */
  int brackets;
  /** SQL BEGIN/CASE ... END nesting after the last scanned line. */
  int sqlBlocks;

  // Facts about the last scanned line.
  boolean hasCode;
  boolean hasComment;
  boolean startedInCode;
  int bracketsAtStart;
  int maxDepth;
  char lastCodeChar;
  /** A ';' outside strings and comments at bracket depth 0 (SQL: ends a statement). */
  boolean statementEnd;

  // First characters of the comment markers, so most characters are dismissed with one comparison.
  private final char lineCommentStart;
  private final char blockOpenStart;
  private final char blockCloseStart;

  LineScanner(Language language) {
    this.language = language;
    this.lineCommentStart = language.lineComments[0].charAt(0);
    this.blockOpenStart = language.blockOpen != null ? language.blockOpen.charAt(0) : 0;
    this.blockCloseStart = language.blockClose != null ? language.blockClose.charAt(0) : 0;
  }

  /** Whether the next line starts in code (not inside a string or block comment). */
  boolean inCode() {
    return mode == CODE;
  }

  /** Whether the next line starts inside a string that spans lines. */
  boolean inString() {
    return mode == STRING;
  }

  void scan(String line) {
    hasCode = false;
    hasComment = false;
    startedInCode = mode == CODE;
    bracketsAtStart = brackets;
    maxDepth = depth;
    lastCodeChar = 0;
    statementEnd = false;
    int n = line.length();
    int i = 0;
    while (i < n) {
      char c = line.charAt(i);
      if (mode == BLOCK_COMMENT) {
        hasComment = true;
        if (c == blockOpenStart && language.nestedBlockComments && line.startsWith(language.blockOpen, i)) {
          commentDepth++;
          i += language.blockOpen.length();
        } else if (c == blockCloseStart && line.startsWith(language.blockClose, i)) {
          i += language.blockClose.length();
          if (--commentDepth == 0) {
            mode = CODE;
          }
        } else {
          i++;
        }
        continue;
      }
      if (mode == STRING) {
        if (!Character.isWhitespace(c)) {
          hasCode = true;
        }
        if (escapes && c == '\\') {
          i += 2;
        } else if (c == closing.charAt(0) && line.startsWith(closing, i)) {
          i += closing.length();
          mode = CODE;
          lastCodeChar = closing.charAt(0);
        } else {
          i++;
        }
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f') {
        i++;
        continue;
      }
      if (c == lineCommentStart && startsLineComment(line, i)) {
        hasComment = true;
        break;
      }
      if (c == blockOpenStart && language.blockOpen != null && line.startsWith(language.blockOpen, i)) {
        mode = BLOCK_COMMENT;
        commentDepth = 1;
        hasComment = true;
        i += language.blockOpen.length();
        continue;
      }
      hasCode = true;
      i = codeChar(line, i, c);
    }
    if (mode == STRING && !multiline) {
      mode = CODE;
    }
  }

  private boolean startsLineComment(String line, int i) {
    for (String prefix : language.lineComments) {
      if (line.startsWith(prefix, i)) {
        if (language == Language.SHELL && i > 0) {
          char before = line.charAt(i - 1);
          return before == ' ' || before == '\t' || before == ';';
        }
        return true;
      }
    }
    return false;
  }

  /** Handles one character of code; returns the index after it (and after any string it opens). */
  private int codeChar(String line, int i, char c) {
    switch (c) {
      case '"' -> {
        if (language.tripleQuotes && line.startsWith("\"\"\"", i)) {
          return openString(i, "\"\"\"", language != Language.KOTLIN, true);
        }
        boolean verbatim = language == Language.CSHARP && i > 0 && line.charAt(i - 1) == '@';
        boolean multi = verbatim || language == Language.RUST || language == Language.SHELL
            || language == Language.SQL;
        return openString(i, "\"", !verbatim && language != Language.SQL, multi);
      }
      case '\'' -> {
        if (language == Language.PYTHON && line.startsWith("'''", i)) {
          return openString(i, "'''", true, true);
        }
        return switch (language.singleQuote) {
          case STRING -> openString(i, "'", true, false);
          case MULTILINE_STRING -> openString(i, "'", language != Language.SHELL && language != Language.SQL, true);
          case CHAR -> charLiteral(line, i);
        };
      }
      case '`' -> {
        if (language.backtickStrings) {
          return openString(i, "`", language == Language.JAVASCRIPT, true);
        }
      }
      case '$' -> {
        if (language.dollarQuotes && line.startsWith("$$", i)) {
          return openString(i, "$$", false, true);
        }
      }
      case '{' -> {
        depth++;
        if (depth > maxDepth) {
          maxDepth = depth;
        }
      }
      case '}' -> depth--;
      case '(', '[' -> brackets++;
      case ')', ']' -> {
        if (brackets > 0) {
          brackets--;
        }
      }
      case ';' -> {
        if (brackets == 0) {
          statementEnd = true;
        }
      }
      default -> {
        if (language == Language.SQL && isWordStart(line, i, c)) {
          return sqlWord(line, i);
        }
      }
    }
    lastCodeChar = c;
    return i + 1;
  }

  private int openString(int i, String delimiter, boolean withEscapes, boolean spansLines) {
    mode = STRING;
    closing = delimiter;
    escapes = withEscapes;
    multiline = spansLines;
    lastCodeChar = delimiter.charAt(0);
    return i + delimiter.length();
  }

  /** {@code 'x'} or {@code '\n'} is skipped whole; a lone quote (a Rust lifetime) is just a character. */
  private int charLiteral(String line, int i) {
    int n = line.length();
    lastCodeChar = '\'';
    if (i + 2 < n && line.charAt(i + 1) != '\\' && line.charAt(i + 2) == '\'') {
      return i + 3;
    }
    if (i + 1 < n && line.charAt(i + 1) == '\\') {
      int limit = Math.min(n, i + 12);
      for (int j = i + 3; j < limit; j++) {
        if (line.charAt(j) == '\'') {
          return j + 1;
        }
      }
    }
    return i + 1;
  }

  private static boolean isWordStart(String line, int i, char c) {
    return Character.isLetter(c) && (i == 0 || !Character.isLetterOrDigit(line.charAt(i - 1)) && line.charAt(i - 1) != '_');
  }

  /** SQL block words: BEGIN and CASE open, END closes unless it ends an IF, LOOP, WHILE or REPEAT. */
  private int sqlWord(String line, int i) {
    int end = i;
    while (end < line.length() && (Character.isLetterOrDigit(line.charAt(end)) || line.charAt(end) == '_')) {
      end++;
    }
    int length = end - i;
    if (length == 5 && line.regionMatches(true, i, "BEGIN", 0, 5)) {
      // "BEGIN TRANSACTION;" / "BEGIN;" start a transaction, not a block.
      int next = skipSpaces(line, end);
      if (next >= line.length() || line.charAt(next) != ';' && !line.regionMatches(true, next, "TRAN", 0, 4)) {
        sqlBlocks++;
      }
    } else if (length == 4 && line.regionMatches(true, i, "CASE", 0, 4)) {
      sqlBlocks++;
    } else if (length == 3 && line.regionMatches(true, i, "END", 0, 3)) {
      int next = skipSpaces(line, end);
      boolean endsStatement = line.regionMatches(true, next, "IF", 0, 2)
          || line.regionMatches(true, next, "LOOP", 0, 4)
          || line.regionMatches(true, next, "WHILE", 0, 5)
          || line.regionMatches(true, next, "REPEAT", 0, 6);
      if (!endsStatement && sqlBlocks > 0) {
        sqlBlocks--;
      }
    }
    lastCodeChar = line.charAt(end - 1);
    return end;
  }

  private static int skipSpaces(String line, int i) {
    while (i < line.length() && line.charAt(i) == ' ') {
      i++;
    }
    return i;
  }
}
