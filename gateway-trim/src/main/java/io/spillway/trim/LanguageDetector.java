package io.spillway.trim;

/**
 * Guesses the language of an unlabelled code block from the leading words of its lines: a few
 * {@code startsWith} checks per line over at most {@link #SAMPLE_LINES} lines from each end, scored
 * per language. Blocks that match nothing well are {@link Language#UNKNOWN}.
 */
final class LanguageDetector {
  /** Lines looked at from the start and from the end of a block. */
  static final int SAMPLE_LINES = 200;
  /** Fewer points than this and the block stays UNKNOWN. */
  private static final int MIN_SCORE = 3;

  private LanguageDetector() {}

  static Language detect(String[] lines, int from, int to) {
    int[] score = new int[Language.values().length];
    int count = to - from;
    if (count <= 2 * SAMPLE_LINES) {
      sample(lines, from, to, score);
    } else {
      sample(lines, from, from + SAMPLE_LINES, score);
      sample(lines, to - SAMPLE_LINES, to, score);
    }
    Language best = Language.UNKNOWN;
    int bestScore = MIN_SCORE - 1;
    for (Language language : Language.values()) {
      if (language != Language.UNKNOWN && score[language.ordinal()] > bestScore) {
        best = language;
        bestScore = score[language.ordinal()];
      }
    }
    return best;
  }

  private static void sample(String[] lines, int from, int to, int[] score) {
    for (int i = from; i < to; i++) {
      String s = lines[i].strip();
      if (s.length() < 2) {
        continue;
      }
      score(s, score);
    }
  }

  private static void add(int[] score, Language language, int points) {
    score[language.ordinal()] += points;
  }

  private static void score(String s, int[] score) {
    char first = s.charAt(0);
    boolean semicolon = s.charAt(s.length() - 1) == ';';
    boolean colon = s.charAt(s.length() - 1) == ':';
    switch (first) {
      case 'd' -> {
        if (s.startsWith("def ")) {
          add(score, Language.PYTHON, 3);
        } else if (s.startsWith("data class ")) {
          add(score, Language.KOTLIN, 3);
        } else if (s.startsWith("done")) {
          add(score, Language.SHELL, 2);
        } else if (s.startsWith("defer ")) {
          add(score, Language.GO, 3);
        }
      }
      case 'e' -> {
        if (s.startsWith("elif ")) {
          add(score, Language.PYTHON, 3);
        } else if (s.startsWith("echo ")) {
          add(score, Language.SHELL, 3);
        } else if (s.startsWith("except") && colon) {
          add(score, Language.PYTHON, 3);
        } else if (s.startsWith("export ") && (s.contains(" function") || s.contains(" const ") || s.contains(" class "))) {
          add(score, Language.JAVASCRIPT, 3);
        } else if (s.startsWith("export ") && s.indexOf('=') > 0 && !semicolon) {
          add(score, Language.SHELL, 2);
        } else if (s.equals("esac") || s.startsWith("else:")) {
          add(score, s.startsWith("else:") ? Language.PYTHON : Language.SHELL, 2);
        }
      }
      case 'f' -> {
        if (s.startsWith("func ")) {
          add(score, Language.GO, 3);
        } else if (s.startsWith("fun ")) {
          add(score, Language.KOTLIN, 3);
        } else if (s.startsWith("fn ")) {
          add(score, Language.RUST, 3);
        } else if (s.startsWith("function ")) {
          add(score, s.endsWith("{") && !s.contains("(") ? Language.SHELL : Language.JAVASCRIPT, 2);
        } else if (s.startsWith("from ") && s.contains(" import ")) {
          add(score, Language.PYTHON, 3);
        } else if (s.equals("fi")) {
          add(score, Language.SHELL, 3);
        } else if (s.startsWith("for ") && s.contains(" in ") && colon) {
          add(score, Language.PYTHON, 2);
        } else if (s.startsWith("fmt.")) {
          add(score, Language.GO, 2);
        }
      }
      case 'i' -> {
        if (s.startsWith("import java") || s.startsWith("import javax") || s.startsWith("import org.") && semicolon) {
          add(score, Language.JAVA, 3);
        } else if (s.startsWith("import ") && (s.contains(" from ") || s.contains("'") && semicolon)) {
          add(score, Language.JAVASCRIPT, 3);
        } else if (s.startsWith("import (") || s.startsWith("import \"")) {
          add(score, Language.GO, 3);
        } else if (s.startsWith("import ") && !semicolon) {
          // "import kotlinx.coroutines.launch" vs "import os" / "import numpy as np"
          boolean deeplyDotted = s.indexOf('.') > 0 && s.indexOf('.') != s.lastIndexOf('.');
          add(score, deeplyDotted ? Language.KOTLIN : Language.PYTHON, deeplyDotted ? 1 : 2);
        } else if (s.startsWith("if ") && colon) {
          add(score, Language.PYTHON, 2);
        } else if (s.startsWith("if [") || s.startsWith("if [[")) {
          add(score, Language.SHELL, 3);
        } else if (s.startsWith("impl ") || s.startsWith("impl<")) {
          add(score, Language.RUST, 3);
        } else if (s.startsWith("INSERT INTO") || s.startsWith("insert into")) {
          add(score, Language.SQL, 3);
        }
      }
      case 'l' -> {
        if (s.startsWith("let mut ")) {
          add(score, Language.RUST, 3);
        } else if (s.startsWith("let ") && semicolon) {
          add(score, s.contains(": ") && !s.contains("=>") ? Language.RUST : Language.JAVASCRIPT, 1);
        } else if (s.startsWith("local ")) {
          add(score, Language.SHELL, 2);
        }
      }
      case 'p' -> {
        if (s.startsWith("package main") || s.startsWith("package ") && !semicolon && !s.contains(".")) {
          add(score, Language.GO, 3);
        } else if (s.startsWith("package ") && semicolon) {
          add(score, Language.JAVA, 3);
        } else if (s.startsWith("package ")) {
          add(score, Language.KOTLIN, 3);
        } else if (s.startsWith("pub fn ") || s.startsWith("pub struct ") || s.startsWith("pub(crate)")) {
          add(score, Language.RUST, 3);
        } else if (s.startsWith("public ") || s.startsWith("private ") || s.startsWith("protected ")) {
          add(score, semicolon || s.endsWith("{") || s.endsWith(")") ? Language.JAVA : Language.CSHARP, 1);
          if (s.contains(" async Task") || s.contains(" string ") || s.contains("{ get;")) {
            add(score, Language.CSHARP, 3);
          }
        } else if (s.startsWith("print(")) {
          add(score, Language.PYTHON, 1);
        }
      }
      case 'c' -> {
        if (s.startsWith("const ") && (s.contains("=>") || s.contains("require(") || s.contains("await "))) {
          add(score, Language.JAVASCRIPT, 3);
        } else if (s.startsWith("const ") && semicolon) {
          add(score, Language.JAVASCRIPT, 1);
        } else if (s.startsWith("console.")) {
          add(score, Language.JAVASCRIPT, 3);
        } else if (s.startsWith("class ") && colon) {
          add(score, Language.PYTHON, 3);
        } else if (s.startsWith("case ") && s.endsWith(")") || s.endsWith(";;")) {
          add(score, Language.SHELL, 2);
        }
      }
      case 'u' -> {
        if (s.startsWith("using System") || s.startsWith("using ") && semicolon && !s.contains("::")) {
          add(score, Language.CSHARP, 3);
        } else if (s.startsWith("use ") && semicolon && s.contains("::")) {
          add(score, Language.RUST, 3);
        } else if (s.startsWith("using namespace ")) {
          add(score, Language.C, 3);
        }
      }
      case 'v' -> {
        if (s.startsWith("val ")) {
          add(score, Language.KOTLIN, 2);
        } else if (s.startsWith("var ") && !semicolon && s.contains(" = ") && !s.contains(":=")) {
          add(score, Language.KOTLIN, 1);
        } else if (s.startsWith("var ") && semicolon) {
          add(score, Language.JAVASCRIPT, 1);
          add(score, Language.CSHARP, 1);
        }
      }
      case 'n' -> {
        if (s.startsWith("namespace ")) {
          add(score, s.endsWith(";") ? Language.CSHARP : Language.C, 1);
          add(score, Language.CSHARP, 1);
        }
      }
      case '#' -> {
        if (s.startsWith("#include") || s.startsWith("#define") || s.startsWith("#ifndef") || s.startsWith("#pragma")) {
          add(score, Language.C, 3);
        } else if (s.startsWith("#!/bin/") || s.startsWith("#!/usr/bin/env bash") || s.startsWith("#!/usr/bin/env sh")) {
          add(score, Language.SHELL, 5);
        } else if (s.startsWith("#!/usr/bin/env python")) {
          add(score, Language.PYTHON, 5);
        } else if (s.startsWith("#[")) {
          add(score, Language.RUST, 3);
        }
      }
      case '@' -> {
        if (s.startsWith("@Override") || s.startsWith("@Test") || s.startsWith("@Autowired")) {
          add(score, Language.JAVA, 2);
          add(score, Language.KOTLIN, 1);
        } else if (s.startsWith("@dataclass") || s.startsWith("@pytest") || s.startsWith("@property")) {
          add(score, Language.PYTHON, 3);
        }
      }
      case 'S', 's' -> {
        if (s.regionMatches(true, 0, "SELECT ", 0, 7)) {
          add(score, Language.SQL, 2);
        } else if (s.startsWith("self.")) {
          add(score, Language.PYTHON, 2);
        } else if (s.startsWith("std::") || s.startsWith("struct ") && s.endsWith("{") && s.contains(" struct") == false) {
          add(score, s.startsWith("std::") ? Language.C : Language.RUST, 1);
        } else if (s.startsWith("System.out.")) {
          add(score, Language.JAVA, 3);
        } else if (s.startsWith("set -e") || s.startsWith("set -o") || s.startsWith("set -u")) {
          add(score, Language.SHELL, 3);
        }
      }
      case 'C' -> {
        if (s.regionMatches(true, 0, "CREATE ", 0, 7)) {
          add(score, Language.SQL, 3);
        } else if (s.startsWith("Console.")) {
          add(score, Language.CSHARP, 3);
        }
      }
      case 'W', 'F', 'G', 'O', 'U', 'B', 'E', 'D', 'A', 'I', 'J', 'L', 'R' -> {
        for (String keyword : new String[] {"WHERE ", "FROM ", "GROUP BY", "ORDER BY", "UPDATE ", "BEGIN", "END;",
            "DECLARE ", "ALTER TABLE", "INSERT INTO", "JOIN ", "LEFT JOIN", "RETURNS ", "RETURN "}) {
          if (s.startsWith(keyword)) {
            add(score, Language.SQL, 2);
            break;
          }
        }
      }
      case 'm' -> {
        if (s.startsWith("match ") && s.endsWith("{")) {
          add(score, Language.RUST, 2);
        } else if (s.startsWith("module.exports")) {
          add(score, Language.JAVASCRIPT, 3);
        }
      }
      case 't' -> {
        if (s.startsWith("then")) {
          add(score, Language.SHELL, 2);
        } else if (s.startsWith("type ") && (s.endsWith("struct {") || s.endsWith("interface {"))) {
          add(score, Language.GO, 3);
        } else if (s.startsWith("try:")) {
          add(score, Language.PYTHON, 3);
        }
      }
      case 'r' -> {
        if (s.startsWith("return ") && !semicolon && !s.endsWith("{") && !s.endsWith(",")) {
          add(score, Language.PYTHON, 1);
          add(score, Language.GO, 1);
          add(score, Language.KOTLIN, 1);
        }
      }
      case 'w' -> {
        if (s.startsWith("with ") && colon) {
          add(score, Language.PYTHON, 3);
        }
      }
      case 'o' -> {
        if (s.startsWith("override fun ")) {
          add(score, Language.KOTLIN, 3);
        }
      }
      default -> {}
    }
    if (s.contains(" := ") || s.startsWith("if err != nil")) {
      add(score, Language.GO, 2);
    }
    traceSignals(s, score);
    bodySignals(s, score);
    if (s.contains("->") && s.contains("fn ")) {
      add(score, Language.RUST, 1);
    }
    if (s.endsWith("):") && (s.startsWith("def ") || s.startsWith("async def "))) {
      add(score, Language.PYTHON, 1);
    }
  }

  /**
   * Stack traces say which language they come from, and the trimmer always keeps them: so a trimmed
   * block is recognised as the same language as the original.
   */
  private static void traceSignals(String s, int[] score) {
    if (s.startsWith("Traceback (most recent call last)") || s.startsWith("File \"") && s.contains(".py\", line ")) {
      add(score, Language.PYTHON, 10);
    } else if (s.startsWith("at ") && s.endsWith(")")) {
      if (s.contains(".java:")) {
        add(score, Language.JAVA, 10);
      } else if (s.contains(".kt:")) {
        add(score, Language.KOTLIN, 10);
      } else if (s.contains(".js:") || s.contains(".ts:") || s.contains(".mjs:") || s.contains(".tsx:")
          || s.contains("node:internal")) {
        add(score, Language.JAVASCRIPT, 10);
      }
    } else if (s.startsWith("at ") && s.contains(".cs:line ")) {
      add(score, Language.CSHARP, 10);
    } else if (s.startsWith("goroutine ") || s.contains(".go:") && s.startsWith("/")) {
      add(score, Language.GO, 10);
    } else if (s.startsWith("thread '") && s.contains("panicked at")) {
      add(score, Language.RUST, 10);
    } else if (s.startsWith("#") && s.length() > 2 && Character.isDigit(s.charAt(1))
        && (s.contains(".c:") || s.contains(".cpp:") || s.contains(".cc:") || s.contains(".h:"))) {
      add(score, Language.C, 10);
    } else if (s.contains(": line ") && s.contains(".sh")) {
      add(score, Language.SHELL, 10);
    } else if (s.contains("PL/pgSQL function") || s.startsWith("psql:")) {
      add(score, Language.SQL, 10);
    }
  }

  /** Signs that survive in function bodies, where imports and headers are gone. */
  private static void bodySignals(String s, int[] score) {
    if (s.startsWith("printf(") || s.startsWith("fprintf(") || s.contains("malloc(") || s.contains("NULL)")
        || s.startsWith("static int ") || s.startsWith("static void ") || s.contains("const char *")
        || s.contains("const char **") || s.contains("std::")) {
      add(score, Language.C, 2);
    }
    if (s.startsWith("System.out.") || s.startsWith("System.err.") || s.startsWith("@Override")) {
      add(score, Language.JAVA, 2);
    }
    if (s.startsWith("Console.") || s.startsWith("var ") && s.endsWith(";") && !s.contains(" => ")
        || s.contains("List<string>") || s.contains(" string ")) {
      add(score, Language.CSHARP, 1);
    }
    if (s.startsWith("println!(") || s.startsWith("let ") && s.endsWith(";") && !s.contains("=>")
        || s.contains("&self") || s.startsWith("pub fn ") || s.startsWith("impl ")) {
      add(score, Language.RUST, 2);
    }
    if (s.startsWith("fmt.Print") || s.startsWith("func ") || s.contains(" := range ")) {
      add(score, Language.GO, 2);
    }
    if (s.startsWith("console.") || s.startsWith("const ") && s.endsWith(";") || s.contains("=> {")) {
      add(score, Language.JAVASCRIPT, 1);
    }
    if (s.startsWith("println(") || s.startsWith("val ") || s.startsWith("fun ")) {
      add(score, Language.KOTLIN, 1);
    }
    if (s.startsWith("def ") || s.startsWith("self.") || s.startsWith("for ") && s.endsWith(":")) {
      add(score, Language.PYTHON, 1);
    }
    if (s.startsWith("echo ") || s.equals("done") || s.equals("fi") || s.endsWith("; do") || s.endsWith("; then")
        || s.startsWith("local ")) {
      add(score, Language.SHELL, 1);
    }
    if (s.startsWith("PERFORM ") || s.startsWith("RETURN ") && s.endsWith(";") || s.startsWith("RAISE ")
        || s.equals("BEGIN") || s.equals("END;")) {
      add(score, Language.SQL, 1);
    }
  }
}
