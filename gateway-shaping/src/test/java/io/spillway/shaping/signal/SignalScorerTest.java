package io.spillway.shaping.signal;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.ShapingConfig;
import io.spillway.shaping.signal.SignalScorer.Reason;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class SignalScorerTest {
  private final SignalScorer scorer = new SignalScorer(ShapingConfig.SignalConfig.DEFAULTS);

  private Reason score(String text) {
    return scorer.score(List.of(text), null, 0);
  }

  @Test
  void fourNestedLoopsWithoutABreakAreLowSignal() {
    String java = """
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < n; b++) {
                for (int c = 0; c < n; c++) {
                    for (int d = 0; d < n; d++) {
                        total += grid[a][b][c][d];
                    }
                }
            }
        }
        return total;
        """;
    assertThat(score(java)).isEqualTo(Reason.NESTED_LOOPS);
  }

  @Test
  void pythonNestingIsJudgedByIndentationToo() {
    String python = """
        def brute(xs):
            for a in xs:
                for b in xs:
                    for c in xs:
                        while True:
                            print(a, b, c)
        """;
    assertThat(score(python)).isEqualTo(Reason.NESTED_LOOPS);
  }

  @Test
  void aBreakOrReturnAnywhereInTheNestMakesItFine() {
    String withBreak = """
        for (int a = 0; a < n; a++) {
            for (int b = 0; b < n; b++) {
                for (int c = 0; c < n; c++) {
                    for (int d = 0; d < n; d++) {
                        if (grid[a][b][c][d] == target) {
                            return new int[] {a, b, c, d};
                        }
                    }
                }
            }
        }
        """;
    assertThat(score(withBreak)).isNull();
  }

  @Test
  void threeNestedLoopsAreFine() {
    String three = """
        for x in range(10):
            for y in range(10):
                for z in range(10):
                    total += x * y * z
        """;
    assertThat(score(three)).isNull();
  }

  @Test
  void siblingLoopsDoNotAddUp() {
    String siblings = """
        for (a of xs) {
          for (b of xs) {
            use(a, b);
          }
        }
        for (c of xs) {
          for (d of xs) {
            use(c, d);
          }
        }
        """;
    assertThat(score(siblings)).isNull();
  }

  @Test
  void proseStartingWithForIsNotALoop() {
    assertThat(score("""
        for example:
          for instance:
            for one:
              for two:
                done
        """)).isNull();
  }

  @Test
  void aLongBase64BlobIsLowSignalWhetherOnOneLineOrWrapped() {
    byte[] bytes = new byte[2000];
    new Random(7).nextBytes(bytes);
    String oneLine = Base64.getEncoder().encodeToString(bytes);
    assertThat(score("Decode this: " + oneLine + " please")).isEqualTo(Reason.BASE64);

    String wrapped = Base64.getMimeEncoder().encodeToString(bytes);
    assertThat(wrapped).contains("\r\n");
    assertThat(score("-----BEGIN DATA-----\n" + wrapped + "\n-----END DATA-----")).isEqualTo(Reason.BASE64);
  }

  @Test
  void shortBase64AndLongOrdinaryTextAreFine() {
    byte[] bytes = new byte[500];
    new Random(7).nextBytes(bytes);
    assertThat(score("token: " + Base64.getEncoder().encodeToString(bytes))).isNull();
    assertThat(score("word ".repeat(5000))).isNull();
    assertThat(score("x".repeat(5000))).as("one repeated letter is not base64").isNull();
  }

  @Test
  void fiveIdenticalPlaceholderLinesAreLowSignal() {
    String stubs = """
        class Api {
          getUser() {
            // TODO: implement
          }
          saveUser() {
            // TODO: implement
          }
          deleteUser() {
            // TODO: implement
          }
          listUsers() {
            // TODO: implement
          }
          countUsers() {
            // TODO: implement
          }
        }
        """;
    assertThat(score(stubs)).isEqualTo(Reason.PLACEHOLDERS);
  }

  @Test
  void stubStatementsCountAsPlaceholders() {
    assertThat(score("fn a() { todo!() }\n".repeat(1) + "    todo!()\n".repeat(5))).isEqualTo(Reason.PLACEHOLDERS);
    assertThat(score("    raise NotImplementedError\n".repeat(5))).isEqualTo(Reason.PLACEHOLDERS);
  }

  @Test
  void realTodoNotesAndFewPlaceholdersAreFine() {
    assertThat(score("""
        // TODO: handle timeouts when the upstream is slow to answer
        // TODO: retry once on connection reset before failing the call
        // TODO: implement
        # TODO: implement
        // TODO: implement
        // TODO: implement
        """)).isNull();
  }

  @Test
  void hotSamplingWithALongOutputIsLowSignal() {
    assertThat(scorer.score(List.of("Write a poem"), 1.2, 4096)).isEqualTo(Reason.HOT_SAMPLING);
    assertThat(scorer.score(List.of("Write a poem"), 1.2, 1024)).isNull();
    assertThat(scorer.score(List.of("Write a poem"), 0.9, 4096)).isNull();
    assertThat(scorer.score(List.of("Write a poem"), null, 4096)).isNull();
  }

  @Test
  void thresholdsComeFromConfig() {
    SignalScorer strict = new SignalScorer(new ShapingConfig.SignalConfig(true, 1, null, 2, 0.5, 100));
    assertThat(strict.score(List.of("for (;;) {\n  for (;;) {\n    x();\n  }\n}\n"), null, 0))
        .isEqualTo(Reason.NESTED_LOOPS);
    assertThat(strict.score(List.of("# TODO\n# TODO\n"), null, 0)).isEqualTo(Reason.PLACEHOLDERS);
    assertThat(strict.score(List.of("hi"), 0.6, 200)).isEqualTo(Reason.HOT_SAMPLING);
  }
}
