package io.spillway.trim;

import java.util.Set;

/** A cursor over one line; every method skips the spaces after what it consumed. */
final class Cursor {
  private final String s;
  private int i;

  Cursor(String s) {
    this.s = s;
  }

  int position() {
    return i;
  }

  boolean atEnd() {
    return i >= s.length();
  }

  char peek() {
    return i < s.length() ? s.charAt(i) : 0;
  }

  void advance() {
    i++;
  }

  String rest() {
    return s.substring(Math.min(i, s.length()));
  }

  void skipSpaces() {
    while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t')) {
      i++;
    }
  }

  boolean skip(char ch) {
    if (peek() == ch) {
      i++;
      skipSpaces();
      return true;
    }
    return false;
  }

  /** Consumes {@code word} when it is the next whole word. */
  boolean word(String word) {
    if (!s.startsWith(word, i)) {
      return false;
    }
    int end = i + word.length();
    if (end < s.length() && isIdentifierPart(s.charAt(end)) && isIdentifierPart(word.charAt(word.length() - 1))) {
      return false;
    }
    i = end;
    skipSpaces();
    return true;
  }

  void skipWords(Set<String> words) {
    while (!atEnd()) {
      int end = i;
      while (end < s.length() && s.charAt(end) != ' ' && s.charAt(end) != '\t' && s.charAt(end) != '('
          && s.charAt(end) != '<') {
        end++;
      }
      if (end > i && words.contains(s.substring(i, end))) {
        i = end;
        skipSpaces();
      } else {
        return;
      }
    }
  }

  void skipAnnotations() {
    while (peek() == '@' && !s.startsWith("@interface", i)) {
      i++;
      dottedIdentifier();
      if (peek() == '(') {
        balanced('(', ')');
      }
    }
    skipAttributes();
  }

  /** C# {@code [Attr]} and C++ {@code [[nodiscard]]}. */
  void skipAttributes() {
    while (peek() == '[') {
      if (balanced('[', ']') == null) {
        return;
      }
    }
  }

  void skipTypeAnnotation() {
    if (peek() == ':') {
      i++;
      skipSpaces();
      while (!atEnd() && peek() != '=') {
        if (peek() == '<') {
          if (!skipGenerics()) {
            return;
          }
        } else {
          i++;
        }
      }
    }
  }

  /** Skips {@code <...>} with nesting; false when it does not close on this line. */
  boolean skipGenerics() {
    if (peek() != '<') {
      return true;
    }
    int depth = 0;
    while (i < s.length()) {
      char ch = s.charAt(i++);
      if (ch == '<') {
        depth++;
      } else if (ch == '>') {
        if (--depth == 0) {
          skipSpaces();
          return true;
        }
      } else if (ch == '(' || ch == ')' || ch == ';' || ch == '{') {
        return false;
      }
    }
    return false;
  }

  /** The text between {@code open} and its matching {@code close}, or null when it does not close. */
  String balanced(char open, char close) {
    if (peek() != open) {
      return null;
    }
    int start = i + 1;
    int depth = 1;
    for (int j = start; j < s.length(); j++) {
      char ch = s.charAt(j);
      if (ch == close) {
        depth--;
      } else if (ch == open) {
        depth++;
      }
      if (depth == 0 || open == close && ch == close) {
        i = j + 1;
        String inside = s.substring(start, j);
        skipSpaces();
        return inside;
      }
    }
    return null;
  }

  String identifier() {
    if (atEnd() || !isIdentifierStart(peek())) {
      return null;
    }
    int start = i;
    while (i < s.length() && isIdentifierPart(s.charAt(i))) {
      i++;
    }
    String id = s.substring(start, i);
    skipSpaces();
    return id;
  }

  String dottedIdentifier() {
    if (atEnd() || !isIdentifierStart(peek())) {
      return null;
    }
    int start = i;
    while (i < s.length() && (isIdentifierPart(s.charAt(i)) || s.charAt(i) == '.')) {
      i++;
    }
    String id = s.substring(start, i);
    skipSpaces();
    return id;
  }

  /** An identifier with {@code ::} or {@code .} qualifiers and an optional leading {@code ~}. */
  String qualifiedIdentifier() {
    int start = i;
    if (peek() == '~') {
      i++;
    }
    while (i < s.length()) {
      char ch = s.charAt(i);
      if (isIdentifierPart(ch) || ch == '.') {
        i++;
      } else if (ch == ':' && i + 1 < s.length() && s.charAt(i + 1) == ':') {
        i += 2;
      } else {
        break;
      }
    }
    if (i == start) {
      return null;
    }
    String id = s.substring(start, i);
    skipSpaces();
    return id;
  }

  /** An SQL object name, possibly schema-qualified or quoted: {@code public."Orders"} → {@code Orders}. */
  String sqlName() {
    int start = i;
    while (i < s.length()) {
      char ch = s.charAt(i);
      if (isIdentifierPart(ch) || ch == '.' || ch == '"' || ch == '`' || ch == '[' || ch == ']') {
        i++;
      } else {
        break;
      }
    }
    if (i == start) {
      return null;
    }
    String name = s.substring(start, i).replace("\"", "").replace("`", "").replace("[", "").replace("]", "");
    int dot = name.lastIndexOf('.');
    return dot >= 0 ? name.substring(dot + 1) : name;
  }

  String shellName() {
    int start = i;
    while (i < s.length()) {
      char ch = s.charAt(i);
      if (isIdentifierPart(ch) || ch == '-' || ch == ':' || ch == '.') {
        i++;
      } else {
        break;
      }
    }
    if (i == start) {
      return null;
    }
    String name = s.substring(start, i);
    skipSpaces();
    return name;
  }

  static boolean isIdentifierStart(char ch) {
    return Character.isLetter(ch) || ch == '_' || ch == '$';
  }

  static boolean isIdentifierPart(char ch) {
    return Character.isLetterOrDigit(ch) || ch == '_' || ch == '$';
  }
}
