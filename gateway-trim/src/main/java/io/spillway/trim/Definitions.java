package io.spillway.trim;

import java.util.Locale;
import java.util.Set;

/**
 * Recognises the first line of a function, method or class definition, per language, from the line's
 * leading words: {@code def}/{@code class} (Python), {@code function}, classes, arrow functions and
 * class methods (JS/TS), classes and methods (Java, Kotlin, C#), {@code func}/{@code type} (Go),
 * functions, classes and namespaces (C/C++), {@code fn}/{@code impl}/{@code struct} (Rust),
 * {@code CREATE FUNCTION|PROCEDURE|VIEW|TABLE|TRIGGER} (SQL) and shell functions. Plain character
 * checks on one line, no regular expressions.
 */
final class Definitions {
  private Definitions() {}

  /**
   * A definition's first line.
   *
   * @param name the defined name
   * @param qualifier a Go method's receiver type, or null
   * @param typeLike a class, interface, struct, impl or namespace: its methods nest inside it
   * @param expression may have no block at all (an arrow function or expression body on one line)
   */
  record Header(String name, String qualifier, boolean typeLike, boolean expression) {}

  private static final Set<String> CONTROL = Set.of(
      "if", "for", "while", "switch", "catch", "with", "return", "function", "else", "do", "try", "typeof",
      "new", "await", "yield", "super", "this", "throw", "case", "sizeof", "delete", "foreach", "using",
      "lock", "fixed", "match", "loop", "synchronized", "assert", "elif", "when", "until", "select", "defer",
      "go", "goto", "print", "echo", "in", "is", "as", "not", "and", "or", "var", "let", "const", "val",
      "static_assert", "decltype", "alignof", "offsetof", "va_arg", "define", "ifdef", "ifndef", "endif",
      "include", "pragma", "elseif", "unless", "require", "import", "export", "from", "package");

  private static final Set<String> MODIFIERS = Set.of(
      "public", "private", "protected", "internal", "static", "final", "abstract", "synchronized", "native",
      "default", "sealed", "non-sealed", "strictfp", "transient", "volatile", "override", "open", "inline",
      "suspend", "data", "inner", "tailrec", "operator", "infix", "external", "virtual", "async", "unsafe",
      "partial", "readonly", "extern", "export", "declare", "constexpr", "explicit", "friend",
      "noexcept", "value", "annotation", "expect", "actual", "const", "mutable",
      "implicit", "lazy", "local", "fileprivate", "consteval", "constinit", "thread_local", "register",
      "__declspec", "template", "typename", "public:", "private:", "protected:", "companion", "crossinline",
      "noinline", "reified", "lateinit");

  private static final Set<String> TYPE_WORDS = Set.of(
      "class", "interface", "record", "struct", "union", "namespace", "object", "trait", "impl", "enum", "mod",
      "module", "@interface");

  /**
   * The header on {@code s} (a stripped code line), or null.
   *
   * @param inType whether the line sits directly in the body of a class-like definition
   * @param topLevel whether the line is outside every brace
   */
  static Header header(Language language, String s, boolean inType, boolean topLevel) {
    if (s.isEmpty()) {
      return null;
    }
    return switch (language) {
      case PYTHON -> python(s);
      case JAVASCRIPT -> javascript(s, inType);
      case JAVA, CSHARP -> javaLike(language, s, inType);
      case KOTLIN -> kotlin(s, inType);
      case GO -> go(s);
      case C -> c(s, inType, topLevel);
      case RUST -> rust(s);
      case SQL -> sql(s);
      case SHELL -> shell(s);
      case UNKNOWN -> unknown(s, inType);
    };
  }

  private static Header python(String s) {
    Cursor c = new Cursor(s);
    c.word("async");
    if (c.word("def")) {
      String name = c.identifier();
      return name != null ? new Header(name, null, false, false) : null;
    }
    if (c.word("class")) {
      String name = c.identifier();
      return name != null ? new Header(name, null, true, false) : null;
    }
    return null;
  }

  private static Header javascript(String s, boolean inType) {
    Cursor c = new Cursor(s);
    c.skipWords(Set.of("export", "default", "declare", "abstract"));
    if (c.word("class") || c.word("interface") || c.word("namespace") || c.word("module") || c.word("enum")) {
      String name = c.identifier();
      return name != null ? new Header(name, null, true, false) : null;
    }
    c.word("async");
    if (c.word("function") || c.word("function*")) {
      c.skip('*');
      String name = c.identifier();
      return name != null ? new Header(name, null, false, false) : null;
    }
    if (c.word("const") || c.word("let") || c.word("var")) {
      String name = c.identifier();
      if (name == null) {
        return null;
      }
      c.skipTypeAnnotation();
      if (!c.skip('=')) {
        return null;
      }
      String rest = c.rest();
      if (rest.startsWith("function") || rest.startsWith("async") || arrowFunction(rest)) {
        return new Header(name, null, false, true);
      }
      return null;
    }
    if (!inType) {
      return null;
    }
    c.skipWords(Set.of("static", "async", "public", "private", "protected", "readonly", "override", "get", "set",
        "abstract"));
    c.skip('*');
    c.skip('#');
    String name = c.identifier();
    if (name == null || CONTROL.contains(name)) {
      return null;
    }
    c.skipGenerics();
    if (c.peek() == '(') {
      return new Header(name, null, false, false);
    }
    if (c.skip('=') && c.rest().contains("=>")) {
      return new Header(name, null, false, true);
    }
    return null;
  }

  /** {@code (a, b) => ...} or {@code a => ...}, not {@code items.map((a) => ...)}. */
  private static boolean arrowFunction(String rest) {
    int arrow = rest.indexOf("=>");
    if (arrow < 0) {
      return false;
    }
    if (rest.startsWith("(")) {
      return true;
    }
    Cursor c = new Cursor(rest);
    return c.identifier() != null && c.position() == arrow;
  }

  private static Header javaLike(Language language, String s, boolean inType) {
    Cursor c = new Cursor(s);
    c.skipAnnotations();
    c.skipWords(MODIFIERS);
    for (String word : TYPE_WORDS) {
      if (c.word(word)) {
        String name = c.identifier();
        return name != null ? new Header(name, null, true, false) : null;
      }
    }
    if (!inType) {
      return null;
    }
    return method(c, language == Language.CSHARP);
  }

  private static Header kotlin(String s, boolean inType) {
    Cursor c = new Cursor(s);
    c.skipAnnotations();
    c.skipWords(MODIFIERS);
    if (c.word("class") || c.word("interface") || c.word("object")) {
      String name = c.identifier();
      if (name == null && s.contains("companion")) {
        name = "Companion";
      }
      return name != null ? new Header(name, null, true, false) : null;
    }
    if (c.word("fun")) {
      c.skipGenerics();
      String name = c.dottedIdentifier();
      if (name == null) {
        return null;
      }
      int dot = name.lastIndexOf('.');
      String receiver = dot > 0 ? name.substring(0, dot) : null;
      return new Header(dot > 0 ? name.substring(dot + 1) : name, receiver, false, true);
    }
    if (inType && (c.word("constructor") || c.word("init"))) {
      return new Header("<init>", null, false, false);
    }
    return null;
  }

  private static Header go(String s) {
    Cursor c = new Cursor(s);
    if (c.word("func")) {
      String receiver = null;
      if (c.peek() == '(') {
        String inside = c.balanced('(', ')');
        if (inside == null) {
          return null;
        }
        int space = inside.lastIndexOf(' ');
        receiver = (space >= 0 ? inside.substring(space + 1) : inside).replace("*", "").strip();
        int generic = receiver.indexOf('[');
        if (generic > 0) {
          receiver = receiver.substring(0, generic);
        }
      }
      String name = c.identifier();
      return name != null ? new Header(name, receiver, false, false) : null;
    }
    if (c.word("type")) {
      String name = c.identifier();
      String rest = c.rest();
      if (name != null && (rest.startsWith("struct") || rest.startsWith("interface"))) {
        return new Header(name, null, false, false);
      }
    }
    return null;
  }

  private static Header c(String s, boolean inType, boolean topLevel) {
    if (s.charAt(0) == '#') {
      return null;
    }
    Cursor c = new Cursor(s);
    c.skipWords(Set.of("template", "typedef", "export"));
    if (c.peek() == '<') {
      c.skipGenerics();
    }
    c.skipWords(MODIFIERS);
    for (String word : new String[] {"class", "struct", "union", "namespace"}) {
      if (c.word(word)) {
        c.skipAttributes();
        String name = c.identifier();
        if (name == null && word.equals("namespace")) {
          name = "<namespace>";
        }
        String rest = c.rest();
        boolean body = rest.isEmpty() || rest.startsWith("{") || rest.startsWith(":") || rest.startsWith("final")
            || word.equals("namespace");
        if (name == null || s.endsWith(";")) {
          return null;
        }
        if (body) {
          return new Header(name, null, true, false);
        }
        // "struct point *make_point(int x) {": a function returning a struct.
        return method(new Cursor(name + " " + rest), false);
      }
    }
    if (!topLevel && !inType) {
      return null;
    }
    return method(c, false);
  }

  private static Header rust(String s) {
    Cursor c = new Cursor(s);
    if (c.word("pub")) {
      if (c.peek() == '(') {
        c.balanced('(', ')');
      }
    }
    c.skipWords(Set.of("async", "const", "unsafe", "default", "extern"));
    if (c.peek() == '"') {
      c.balanced('"', '"');
      c.skipSpaces();
    }
    if (c.word("fn")) {
      String name = c.identifier();
      return name != null ? new Header(name, null, false, false) : null;
    }
    if (c.word("impl")) {
      c.skipGenerics();
      String rest = c.rest();
      int forAt = rest.indexOf(" for ");
      String type = forAt >= 0 ? rest.substring(forAt + 5) : rest;
      String name = new Cursor(type.strip()).identifier();
      return name != null ? new Header(name, null, true, false) : null;
    }
    if (c.word("struct") || c.word("enum") || c.word("union")) {
      String name = c.identifier();
      return name != null ? new Header(name, null, false, false) : null;
    }
    if (c.word("trait") || c.word("mod")) {
      String name = c.identifier();
      return name != null ? new Header(name, null, true, false) : null;
    }
    if (c.word("macro_rules!")) {
      String name = c.identifier();
      return name != null ? new Header(name, null, false, false) : null;
    }
    return null;
  }

  private static Header sql(String s) {
    if (s.length() < 7 || !s.regionMatches(true, 0, "CREATE ", 0, 7)) {
      return null;
    }
    Cursor c = new Cursor(s.toUpperCase(Locale.ROOT));
    c.word("CREATE");
    if (c.word("OR")) {
      c.word("REPLACE");
    }
    c.skipWords(Set.of("TEMP", "TEMPORARY", "UNIQUE", "MATERIALIZED", "DEFINER", "GLOBAL", "UNLOGGED",
        "RECURSIVE", "DEFINITE", "CONSTRAINT", "EDITIONABLE"));
    boolean known = false;
    for (String kind : new String[] {"FUNCTION", "PROCEDURE", "VIEW", "TABLE", "TRIGGER", "INDEX", "TYPE", "PACKAGE",
        "PROC"}) {
      if (c.word(kind)) {
        known = true;
        break;
      }
    }
    if (!known) {
      return null;
    }
    c.word("BODY");
    if (c.word("IF")) {
      c.word("NOT");
      c.word("EXISTS");
    }
    int start = c.position();
    String original = s.substring(Math.min(start, s.length()));
    Cursor name = new Cursor(original);
    String id = name.sqlName();
    return id != null ? new Header(id, null, false, false) : null;
  }

  private static Header shell(String s) {
    Cursor c = new Cursor(s);
    if (c.word("function")) {
      String name = c.shellName();
      return name != null ? new Header(name, null, false, false) : null;
    }
    String name = c.shellName();
    if (name != null && c.skip('(') && c.skip(')')) {
      return new Header(name, null, false, false);
    }
    return null;
  }

  /** Keyword definitions of any language, for code whose language is not known. */
  private static Header unknown(String s, boolean inType) {
    Header header = python(s);
    if (header == null) {
      header = javascript(s, false);
    }
    if (header == null) {
      header = go(s);
    }
    if (header == null) {
      header = rust(s);
    }
    if (header == null) {
      header = javaLike(Language.JAVA, s, inType);
    }
    return header;
  }

  /**
   * A method or function header after the modifiers: {@code Type name(}, {@code Type Cls::name(},
   * or a constructor {@code Name(} inside a class. Declarations without a body are ruled out later,
   * when no brace follows.
   */
  private static Header method(Cursor c, boolean csharp) {
    int words = 0;
    String last = null;
    String first = null;
    while (!c.atEnd()) {
      char ch = c.peek();
      if (Cursor.isIdentifierStart(ch) || ch == '~') {
        String word = c.qualifiedIdentifier();
        if (word == null) {
          return null;
        }
        if (first == null) {
          first = word;
        }
        last = word;
        words++;
      } else if (ch == '<') {
        if (!c.skipGenerics()) {
          return null;
        }
      } else if (ch == '[' || ch == ']' || ch == '*' || ch == '&' || ch == '?' || ch == ' ' || ch == ',') {
        c.advance();
      } else {
        break;
      }
    }
    if (c.atEnd() || c.peek() != '(' || last == null) {
      return null;
    }
    if (CONTROL.contains(first) || CONTROL.contains(last)) {
      return null;
    }
    int scope = last.lastIndexOf("::");
    String name = scope >= 0 ? last.substring(scope + 2) : last;
    String qualifier = scope > 0 ? last.substring(0, scope) : null;
    if (name.indexOf('.') >= 0 && !csharp) {
      return null;
    }
    if (name.isEmpty() || CONTROL.contains(name)) {
      return null;
    }
    if (words == 1 && qualifier == null && !Character.isUpperCase(name.charAt(0)) && name.charAt(0) != '~') {
      // One word before '(' is a call, unless it is a constructor (named like its class).
      return null;
    }
    return new Header(name, qualifier, false, false);
  }
}
