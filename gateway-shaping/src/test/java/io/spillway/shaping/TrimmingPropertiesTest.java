package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.tokens.TokenCounter;
import io.spillway.trim.ContextTrimmer;
import io.spillway.trim.TrimSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Properties of trimming over a bounded run of generated source files (fixed seeds, so a failure
 * names its seed and reproduces): it never increases tokens, it is idempotent, and it always keeps
 * the stack trace and the last line — for whole files (completions prompts) and for the same files
 * fenced in a chat message.
 */
class TrimmingPropertiesTest {
  private static final int CASES = 200;
  private static final TrimSettings SETTINGS = new TrimSettings(50, 3, 3, 120, "... (context trimmed)");
  private static final TrimSettings TIGHT = new TrimSettings(8, 1, 2, 10, "... (context trimmed)");
  private static final TokenCounter TOKENS = TokenCounter.forModel("gpt-4o");

  static Stream<CodeGenerator.Sample> samples() {
    return LongStream.range(1, CASES + 1).mapToObj(CodeGenerator::generate);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void trimmingNeverIncreasesTokens(CodeGenerator.Sample sample) {
    for (TrimSettings settings : List.of(SETTINGS, TIGHT)) {
      ContextTrimmer trimmer = new ContextTrimmer(settings);
      String trimmed = trimmer.trimCode(sample.text(), null);
      String kept = TokenGuard.fewerTokens(sample.text(), trimmed, TOKENS.tally(Long.MAX_VALUE), (original, after) -> {});
      assertThat(TOKENS.count(kept)).isLessThanOrEqualTo(TOKENS.count(sample.text()));
      if (kept != sample.text()) {
        assertThat(TOKENS.count(kept)).isLessThan(TOKENS.count(sample.text()));
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void trimmingIsIdempotent(CodeGenerator.Sample sample) {
    for (TrimSettings settings : List.of(SETTINGS, TIGHT)) {
      ContextTrimmer trimmer = new ContextTrimmer(settings);
      String once = trimmer.trimCode(sample.text(), null);
      assertThat(trimmer.trimCode(once, null)).isEqualTo(once);
      String message = fenced(sample);
      String onceMessage = trimmer.trimMessage(message);
      assertThat(trimmer.trimMessage(onceMessage)).isEqualTo(onceMessage);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void trimmingKeepsTheStackTraceAndTheLastLine(CodeGenerator.Sample sample) {
    for (TrimSettings settings : List.of(SETTINGS, TIGHT)) {
      ContextTrimmer trimmer = new ContextTrimmer(settings);
      String trimmed = trimmer.trimCode(sample.text(), null);
      assertThat(lastLine(trimmed)).isEqualTo(lastLine(sample.text()));
      assertThat(trimmed.endsWith("\n")).isEqualTo(sample.text().endsWith("\n"));
      assertKeepsInOrder(trimmed, sample.traceLines());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void trimmingAMessageNeverBreaksAFence(CodeGenerator.Sample sample) {
    ContextTrimmer trimmer = new ContextTrimmer(TIGHT);
    String message = fenced(sample);
    String trimmed = trimmer.trimMessage(message);
    assertThat(fenceLines(trimmed)).isEqualTo(fenceLines(message));
    assertThat(trimmed).startsWith("Here is my code:\n").endsWith("\nWhy does it fail?");
    assertKeepsInOrder(trimmed, sample.traceLines());
  }

  private static String fenced(CodeGenerator.Sample sample) {
    String code = sample.text().endsWith("\n") ? sample.text() : sample.text() + "\n";
    return "Here is my code:\n```" + sample.language().name().toLowerCase() + "\n" + code + "```\nWhy does it fail?";
  }

  private static List<String> fenceLines(String text) {
    List<String> fences = new ArrayList<>();
    for (String line : text.split("\n", -1)) {
      if (line.strip().startsWith("```")) {
        fences.add(line);
      }
    }
    return fences;
  }

  /** Every non-blank trace line appears, in order. */
  private static void assertKeepsInOrder(String text, List<String> traceLines) {
    String[] lines = text.split("\n", -1);
    int at = 0;
    for (String trace : traceLines) {
      if (trace.isBlank()) {
        continue;
      }
      while (at < lines.length && !lines[at].equals(trace)) {
        at++;
      }
      assertThat(at).as("trace line kept in order: " + trace).isLessThan(lines.length);
      at++;
    }
  }

  private static String lastLine(String text) {
    String body = text.endsWith("\n") ? text.substring(0, text.length() - 1) : text;
    return body.substring(body.lastIndexOf('\n') + 1);
  }
}
