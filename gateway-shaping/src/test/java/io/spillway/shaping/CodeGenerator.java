package io.spillway.shaping;

import io.spillway.trim.Language;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random but plausible source files for property runs: functions and classes with nested blocks,
 * comments (line and block), blank lines, strings holding braces and comment markers, and an error
 * stack trace naming some of the functions, at the end or somewhere in the middle. Deterministic per
 * seed.
 */
public final class CodeGenerator {
  /** One generated file: its text, the language, and the lines of its stack trace, in order. */
  public record Sample(String text, Language language, List<String> traceLines, long seed) {
    @Override
    public String toString() {
      return language + " seed " + seed;
    }
  }

  static final Language[] LANGUAGES = {
    Language.PYTHON, Language.JAVASCRIPT, Language.JAVA, Language.KOTLIN, Language.GO, Language.C,
    Language.CSHARP, Language.RUST, Language.SHELL, Language.SQL
  };

  private final Random random;
  private final Language language;
  private final List<String> lines = new ArrayList<>();
  private final List<String> functions = new ArrayList<>();
  private int indentUnit;

  private CodeGenerator(long seed, Language language) {
    this.random = new Random(seed);
    this.language = language;
    this.indentUnit = language == Language.GO ? 1 : 4;
  }

  public static Sample generate(long seed) {
    Language language = LANGUAGES[(int) Math.floorMod(seed, (long) LANGUAGES.length)];
    CodeGenerator g = new CodeGenerator(seed, language);
    return g.file(seed);
  }

  private Sample file(long seed) {
    header();
    int functionCount = 4 + random.nextInt(30);
    List<String> trace = null;
    int traceAt = random.nextInt(4) == 0 ? 1 + random.nextInt(functionCount) : -1;
    boolean inClass = language == Language.JAVA || language == Language.CSHARP || language == Language.KOTLIN
        && random.nextBoolean() || language == Language.PYTHON && random.nextBoolean()
        || language == Language.JAVASCRIPT && random.nextBoolean() || language == Language.RUST && random.nextBoolean();
    if (inClass) {
      openClass();
    }
    for (int i = 0; i < functionCount; i++) {
      if (i == traceAt && !inClass) {
        trace = trace();
        lines.addAll(trace);
      }
      function(inClass);
      noise();
    }
    if (inClass) {
      closeClass();
    }
    if (trace == null) {
      blank();
      trace = trace();
      lines.addAll(trace);
    }
    if (random.nextBoolean()) {
      // Something after the trace: a follow-up line, as people paste.
      lines.add(language == Language.PYTHON || language == Language.SHELL ? "# what is wrong here?" : "// what is wrong here?");
    }
    return new Sample(String.join("\n", lines) + (random.nextBoolean() ? "\n" : ""), language, trace, seed);
  }

  private String indent(int level) {
    String unit = language == Language.GO ? "\t" : " ".repeat(indentUnit);
    return unit.repeat(level);
  }

  private void blank() {
    lines.add(random.nextInt(5) == 0 ? "   " : "");
  }

  private void comment(int level) {
    String text = WORDS[random.nextInt(WORDS.length)] + " " + WORDS[random.nextInt(WORDS.length)] + " { ( \" '";
    switch (language) {
      case PYTHON, SHELL -> lines.add(indent(level) + "# " + text);
      case SQL -> lines.add(indent(level) + "-- " + text);
      default -> {
        if (random.nextInt(4) == 0) {
          lines.add(indent(level) + "/* " + text);
          lines.add(indent(level) + " * more { about it");
          lines.add(indent(level) + " */");
        } else {
          lines.add(indent(level) + "// " + text);
        }
      }
    }
  }

  private void noise() {
    int n = random.nextInt(3);
    for (int i = 0; i < n; i++) {
      if (random.nextBoolean()) {
        blank();
      } else {
        comment(0);
      }
    }
  }

  private void header() {
    switch (language) {
      case PYTHON -> {
        lines.add("import os");
        lines.add("import json");
        lines.add("from typing import Optional");
      }
      case JAVASCRIPT -> {
        lines.add("import { readFile } from \"fs/promises\";");
        lines.add("const path = require(\"path\");");
      }
      case JAVA -> {
        lines.add("package com.example.gen;");
        lines.add("import java.util.List;");
        lines.add("import java.util.Map;");
      }
      case KOTLIN -> {
        lines.add("package com.example.gen");
        lines.add("import kotlinx.coroutines.flow.map");
      }
      case GO -> {
        lines.add("package main");
        lines.add("import (");
        lines.add("\t\"fmt\"");
        lines.add(")");
      }
      case C -> {
        lines.add("#include <stdio.h>");
        lines.add("#include <stdlib.h>");
        lines.add("#define LIMIT 64");
      }
      case CSHARP -> {
        lines.add("using System;");
        lines.add("using System.Collections.Generic;");
        lines.add("namespace Example.Gen;");
      }
      case RUST -> {
        lines.add("use std::collections::HashMap;");
        lines.add("use std::fmt;");
      }
      case SHELL -> {
        lines.add("#!/usr/bin/env bash");
        lines.add("set -euo pipefail");
      }
      case SQL -> {
        lines.add("CREATE TABLE items (id BIGINT PRIMARY KEY, name TEXT NOT NULL);");
      }
      default -> {}
    }
  }

  private void openClass() {
    switch (language) {
      case PYTHON -> lines.add("class Service:");
      case JAVASCRIPT -> lines.add("export class Service {");
      case JAVA -> lines.add("public final class Service {");
      case KOTLIN -> lines.add("class Service(private val limit: Int) {");
      case CSHARP -> {
        lines.add("public class Service");
        lines.add("{");
      }
      case RUST -> lines.add("impl Service {");
      default -> {}
    }
  }

  private void closeClass() {
    if (language != Language.PYTHON) {
      lines.add("}");
    }
  }

  private String name() {
    String name = VERBS[random.nextInt(VERBS.length)] + capitalize(WORDS[random.nextInt(WORDS.length)]) + functions.size();
    functions.add(name);
    return name;
  }

  private void function(boolean inClass) {
    int base = inClass ? 1 : 0;
    String name = name();
    String in = indent(base);
    boolean braces = true;
    switch (language) {
      case PYTHON -> {
        if (random.nextInt(4) == 0) {
          lines.add(in + "@staticmethod");
        }
        lines.add(in + "def " + name + "(" + (inClass ? "self, " : "") + "items, limit=10):");
        braces = false;
      }
      case JAVASCRIPT -> lines.add(in + (inClass ? name + "(items, limit) {" : "export function " + name + "(items, limit) {"));
      case JAVA -> {
        if (random.nextInt(3) == 0) {
          lines.add(in + "@Override");
        }
        lines.add(in + "public int " + name + "(List<String> items, int limit) {");
      }
      case KOTLIN -> lines.add(in + "fun " + name + "(items: List<String>, limit: Int): Int {");
      case GO -> lines.add("func " + name + "(items []string, limit int) int {");
      case C -> lines.add("static int " + name + "(const char **items, int limit) {");
      case CSHARP -> {
        lines.add(in + "public int " + name + "(List<string> items, int limit)");
        lines.add(in + "{");
      }
      case RUST -> lines.add(in + "pub fn " + name + "(items: &[String], limit: usize) -> usize {");
      case SHELL -> lines.add(name + "() {");
      case SQL -> {
        lines.add("CREATE OR REPLACE FUNCTION " + name + "(p_limit INT)");
        lines.add("RETURNS INT AS $$");
        lines.add("BEGIN");
      }
      default -> {}
    }
    int body = 1 + random.nextInt(25);
    body(base + 1, body, 0);
    if (braces) {
      switch (language) {
        case SQL -> {
          lines.add(indent(1) + "RETURN p_limit;");
          lines.add("END;");
          lines.add("$$ LANGUAGE plpgsql;");
        }
        default -> lines.add(in + "}");
      }
    } else {
      lines.add(indent(base + 1) + "return limit");
    }
  }

  private void body(int level, int count, int depth) {
    for (int i = 0; i < count; i++) {
      int roll = random.nextInt(10);
      if (roll == 0) {
        blank();
      } else if (roll == 1) {
        comment(level);
      } else if (roll == 2 && depth < 3 && language != Language.SQL) {
        block(level, depth);
      } else {
        lines.add(indent(level) + statement());
      }
    }
  }

  private void block(int level, int depth) {
    String in = indent(level);
    switch (language) {
      case PYTHON -> {
        lines.add(in + "for item in items:");
        body(level + 1, 1 + random.nextInt(4), depth + 1);
      }
      case SHELL -> {
        lines.add(in + "for item in \"$@\"; do");
        body(level + 1, 1 + random.nextInt(4), depth + 1);
        lines.add(in + "done");
      }
      case GO -> {
        lines.add(in + "for _, item := range items {");
        body(level + 1, 1 + random.nextInt(4), depth + 1);
        lines.add(in + "}");
      }
      case RUST -> {
        lines.add(in + "for item in items.iter() {");
        body(level + 1, 1 + random.nextInt(4), depth + 1);
        lines.add(in + "}");
      }
      default -> {
        lines.add(in + "if (limit > " + random.nextInt(100) + ") {");
        body(level + 1, 1 + random.nextInt(4), depth + 1);
        if (random.nextBoolean()) {
          lines.add(in + "} else {");
          body(level + 1, 1 + random.nextInt(3), depth + 1);
        }
        lines.add(in + "}");
      }
    }
  }

  private String statement() {
    String other = functions.isEmpty() ? "helper" : functions.get(random.nextInt(functions.size()));
    String word = WORDS[random.nextInt(WORDS.length)];
    return switch (language) {
      case PYTHON -> random.nextBoolean() ? word + " = " + other + "(items, limit)" : "log(\"" + word + " { // # \")";
      case JAVASCRIPT -> random.nextBoolean() ? "const " + word + random.nextInt(9) + " = " + other + "(items, limit);"
          : "console.log(`" + word + " } /* ${limit}`);";
      case JAVA -> random.nextBoolean() ? "int " + word + random.nextInt(9) + " = " + other + "(items, limit);"
          : "System.out.println(\"" + word + " } // \" + '{');";
      case KOTLIN -> random.nextBoolean() ? "val " + word + random.nextInt(9) + " = " + other + "(items, limit)"
          : "println(\"" + word + " } /* \")";
      case GO -> random.nextBoolean() ? word + random.nextInt(9) + " := " + other + "(items, limit)"
          : "fmt.Println(\"" + word + " } //\", '{')";
      case C -> random.nextBoolean() ? "int " + word + random.nextInt(9) + " = " + other + "(items, limit);"
          : "printf(\"" + word + " } /* %d\\n\", limit);";
      case CSHARP -> random.nextBoolean() ? "var " + word + random.nextInt(9) + " = " + other + "(items, limit);"
          : "Console.WriteLine(\"" + word + " } // \");";
      case RUST -> random.nextBoolean() ? "let " + word + random.nextInt(9) + " = " + other + "(items, limit);"
          : "println!(\"" + word + " }} // {}\", limit);";
      case SHELL -> random.nextBoolean() ? other + " \"$1\" \"$LIMIT\"" : "echo \"" + word + " } # done\"";
      case SQL -> "PERFORM " + other + "(p_limit);";
      default -> word + "();";
    };
  }

  private List<String> trace() {
    List<String> trace = new ArrayList<>();
    String f1 = functions.isEmpty() ? "main" : functions.get(random.nextInt(functions.size()));
    String f2 = functions.isEmpty() ? "main" : functions.get(random.nextInt(functions.size()));
    int line = 10 + random.nextInt(900);
    switch (language) {
      case PYTHON -> {
        trace.add("Traceback (most recent call last):");
        trace.add("  File \"/app/service.py\", line " + line + ", in " + f2);
        trace.add("    result = " + f1 + "(items)");
        trace.add("  File \"/app/service.py\", line " + (line + 7) + ", in " + f1);
        trace.add("    return items[limit]");
        trace.add("IndexError: list index out of range");
      }
      case JAVASCRIPT -> {
        trace.add("TypeError: Cannot read properties of undefined (reading 'length')");
        trace.add("    at " + f1 + " (/app/src/service.js:" + line + ":17)");
        trace.add("    at " + f2 + " (/app/src/service.js:" + (line + 40) + ":5)");
        trace.add("    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)");
      }
      case JAVA, KOTLIN -> {
        trace.add("Exception in thread \"main\" java.lang.IllegalStateException: limit " + line + " exceeded");
        trace.add("\tat com.example.gen.Service." + f1 + "(Service.java:" + line + ")");
        trace.add("\tat com.example.gen.Service." + f2 + "(Service.java:" + (line + 12) + ")");
        trace.add("\t... 3 more");
      }
      case CSHARP -> {
        trace.add("Unhandled exception. System.InvalidOperationException: limit exceeded");
        trace.add("   at Example.Gen.Service." + f1 + "(List`1 items, Int32 limit) in /src/Service.cs:line " + line);
        trace.add("   at Example.Gen.Service." + f2 + "(List`1 items, Int32 limit) in /src/Service.cs:line " + (line + 3));
      }
      case GO -> {
        trace.add("panic: runtime error: index out of range [" + line + "] with length 3");
        trace.add("");
        trace.add("goroutine 1 [running]:");
        trace.add("main." + f1 + "({0xc000010000, 0x3, 0x3}, 0x" + Integer.toHexString(line) + ")");
        trace.add("\t/home/dev/app/main.go:" + line + " +0x1d");
        trace.add("main." + f2 + "(...)");
        trace.add("\t/home/dev/app/main.go:" + (line + 9));
        trace.add("exit status 2");
      }
      case C -> {
        trace.add("Program received signal SIGSEGV, Segmentation fault.");
        trace.add("#0  0x0000555555555" + Integer.toHexString(line) + " in " + f1 + " (items=0x0, limit=3) at app.c:" + line);
        trace.add("#1  0x0000555555556" + Integer.toHexString(line) + " in " + f2 + " () at app.c:" + (line + 5));
      }
      case RUST -> {
        trace.add("thread 'main' panicked at src/main.rs:" + line + ":9:");
        trace.add("called `Option::unwrap()` on a `None` value");
        trace.add("stack backtrace:");
        trace.add("   0: app::" + f1);
        trace.add("             at ./src/main.rs:" + line + ":9");
        trace.add("   1: app::" + f2);
        trace.add("             at ./src/main.rs:" + (line + 4) + ":5");
      }
      case SHELL -> trace.add("./run.sh: line " + line + ": jq: command not found");
      case SQL -> {
        trace.add("psql:run.sql:" + line + ": ERROR:  division by zero");
        trace.add("CONTEXT:  PL/pgSQL function " + f1.toLowerCase() + "(integer) line 4 at RETURN");
      }
      default -> {}
    }
    return trace;
  }

  private static String capitalize(String s) {
    return Character.toUpperCase(s.charAt(0)) + s.substring(1);
  }

  private static final String[] WORDS = {
    "order", "total", "cache", "limit", "user", "token", "queue", "buffer", "price", "stock", "report", "entry",
    "record", "batch", "window", "client", "route", "frame", "chunk", "state"
  };

  private static final String[] VERBS = {"load", "save", "compute", "check", "render", "parse", "merge", "flush"};
}
