package io.spillway.local.context;

import io.spillway.core.tokens.TokenCounter;

/**
 * Cuts a text down to about a token budget, keeping its first lines (a quarter of the budget) and
 * its last lines (the rest), with one marker line naming what was cut. The end of a tool's output
 * (the error, the summary, the last test results) usually matters most, its start says what it was.
 * A text that is one long line is cut by characters instead. Stateless.
 */
final class Excerpt {
  private Excerpt() {}

  static String of(String text, int budget, TokenCounter counter) {
    if (!counter.exceeds(text, budget)) {
      return text;
    }
    String[] lines = text.split("\n", -1);
    int headBudget = budget / 4;
    int tailBudget = budget - headBudget - 16;
    int head = 0;
    int used = 0;
    while (head < lines.length) {
      int cost = counter.count(lines[head]) + 1;
      if (used + cost > headBudget) {
        break;
      }
      used += cost;
      head++;
    }
    int tail = lines.length;
    used = 0;
    while (tail > head) {
      int cost = counter.count(lines[tail - 1]) + 1;
      if (used + cost > tailBudget) {
        break;
      }
      used += cost;
      tail--;
    }
    if (tail == lines.length || head == tail) {
      return byCharacters(text, headBudget, tailBudget);
    }
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < head; i++) {
      out.append(lines[i]).append('\n');
    }
    out.append("... (").append(tail - head).append(" lines cut to fit the local model's context window)");
    for (int i = tail; i < lines.length; i++) {
      out.append('\n').append(lines[i]);
    }
    return out.toString();
  }

  /** About three characters per token, which undercounts rarely; the caller checks the count. */
  private static String byCharacters(String text, int headBudget, int tailBudget) {
    int headChars = Math.min(text.length(), headBudget * 3);
    int tailChars = Math.min(text.length() - headChars, tailBudget * 3);
    int cut = text.length() - headChars - tailChars;
    if (cut <= 0) {
      return text;
    }
    return text.substring(0, headChars) + "\n... (" + cut + " characters cut to fit the local model's context window)\n"
        + text.substring(text.length() - tailChars);
  }
}
