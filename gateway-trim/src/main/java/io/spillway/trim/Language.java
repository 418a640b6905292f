package io.spillway.trim;

import java.util.Locale;

/**
 * The languages the trimmer knows: each with its comment and string syntax and how its definitions
 * are delimited (braces, indentation, or SQL statements). TypeScript counts as JavaScript, C++ and
 * Objective-C as C.
 */
public enum Language {
  PYTHON(new String[] {"#"}, null, null, false, Quote.STRING, true, false, false, Blocks.INDENT),
  JAVASCRIPT(new String[] {"//"}, "/*", "*/", false, Quote.STRING, false, true, false, Blocks.BRACES),
  JAVA(new String[] {"//"}, "/*", "*/", false, Quote.CHAR, true, false, false, Blocks.BRACES),
  KOTLIN(new String[] {"//"}, "/*", "*/", true, Quote.CHAR, true, false, false, Blocks.BRACES),
  GO(new String[] {"//"}, "/*", "*/", false, Quote.CHAR, false, true, false, Blocks.BRACES),
  C(new String[] {"//"}, "/*", "*/", false, Quote.CHAR, false, false, false, Blocks.BRACES),
  CSHARP(new String[] {"//"}, "/*", "*/", false, Quote.CHAR, false, false, false, Blocks.BRACES),
  RUST(new String[] {"//"}, "/*", "*/", true, Quote.CHAR, false, false, false, Blocks.BRACES),
  SQL(new String[] {"--"}, "/*", "*/", false, Quote.MULTILINE_STRING, false, false, true, Blocks.STATEMENTS),
  SHELL(new String[] {"#"}, null, null, false, Quote.MULTILINE_STRING, false, false, false, Blocks.BRACES),
  /** Anything not recognised: C-like comments and braces, keyword-based definitions of any language. */
  UNKNOWN(new String[] {"//"}, "/*", "*/", false, Quote.STRING, false, false, false, Blocks.BRACES);

  /** What a single quote starts. */
  enum Quote {
    /** A string that ends at the line end (JS, Python). */
    STRING,
    /** A string that may span lines (SQL, shell). */
    MULTILINE_STRING,
    /** A one-character literal when it closes right away, otherwise nothing (a Rust lifetime). */
    CHAR
  }

  /** How a definition's extent is found. */
  enum Blocks {
    BRACES,
    INDENT,
    STATEMENTS
  }

  final String[] lineComments;
  final String blockOpen;
  final String blockClose;
  final boolean nestedBlockComments;
  final Quote singleQuote;
  final boolean tripleQuotes;
  final boolean backtickStrings;
  final boolean dollarQuotes;
  final Blocks blocks;

  Language(String[] lineComments, String blockOpen, String blockClose, boolean nestedBlockComments,
      Quote singleQuote, boolean tripleQuotes, boolean backtickStrings, boolean dollarQuotes, Blocks blocks) {
    this.lineComments = lineComments;
    this.blockOpen = blockOpen;
    this.blockClose = blockClose;
    this.nestedBlockComments = nestedBlockComments;
    this.singleQuote = singleQuote;
    this.tripleQuotes = tripleQuotes;
    this.backtickStrings = backtickStrings;
    this.dollarQuotes = dollarQuotes;
    this.blocks = blocks;
  }

  /** The language named by a Markdown fence's info string ({@code ```ts}), or null. */
  public static Language fromFenceInfo(String info) {
    if (info == null || info.isBlank()) {
      return null;
    }
    String word = info.strip();
    int end = 0;
    while (end < word.length() && !Character.isWhitespace(word.charAt(end)) && word.charAt(end) != '{'
        && word.charAt(end) != ',') {
      end++;
    }
    return switch (word.substring(0, end).toLowerCase(Locale.ROOT)) {
      case "python", "py", "python3", "py3", "pycon", "pytb", "ipython" -> PYTHON;
      case "javascript", "js", "jsx", "mjs", "cjs", "node", "typescript", "ts", "tsx" -> JAVASCRIPT;
      case "java" -> JAVA;
      case "kotlin", "kt", "kts" -> KOTLIN;
      case "go", "golang" -> GO;
      case "c", "h", "cpp", "c++", "cc", "cxx", "hpp", "hh", "objc", "objective-c", "objectivec", "cuda" -> C;
      case "csharp", "c#", "cs" -> CSHARP;
      case "rust", "rs" -> RUST;
      case "sql", "postgresql", "postgres", "psql", "plpgsql", "mysql", "sqlite", "tsql", "plsql" -> SQL;
      case "sh", "bash", "shell", "zsh", "ksh", "console", "shellscript" -> SHELL;
      default -> null;
    };
  }
}
