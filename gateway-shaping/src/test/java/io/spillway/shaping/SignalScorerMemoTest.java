package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.Route;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.testing.PromptBodies;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.TextKey;
import io.spillway.shaping.signal.SignalScorer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Remembering each text's scan changes no score: the remembering scorer agrees with the scorer as it
 * was before (SignalScorerBefore, a verbatim copy), on the bodies captured from real clients and on
 * generated requests whose texts repeat across requests (as an agent's turns do), in every order.
 */
class SignalScorerMemoTest {
  private static final ShapingConfig.SignalConfig DEFAULTS = ShapingConfig.SignalConfig.DEFAULTS;
  private static final ShapingConfig.SignalConfig STRICT = new ShapingConfig.SignalConfig(true, 1, 64, 2, 0.95, 2048, 1_000);

  /** The captured bodies shaping reads (a {@code count_tokens} call is answered before shaping). */
  static List<PromptBodies.Body> captured() {
    return PromptBodies.captured().stream().filter(body -> body.route() != Route.MESSAGES_COUNT_TOKENS).toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedClientBodyScoresAsBeforeColdAndRemembered(PromptBodies.Body body) {
    List<String> texts = PromptWalk.walk(body.route(), body.body()).texts();
    assertThat(texts).isNotEmpty();
    for (ShapingConfig.SignalConfig config : List.of(DEFAULTS, STRICT)) {
      SignalScorer scorer = new SignalScorer(config);
      String before = tag(new SignalScorerBefore(config).score(texts, null, 0));
      assertThat(tag(scorer.score(texts, null, 0))).isEqualTo(before);
      assertThat(tag(scorer.score(texts, null, 0))).as("remembered").isEqualTo(before);
    }
  }

  @Test
  void aRepeatedPrefixIsScannedOnceAndScoresTheSame() {
    SignalScorer scorer = new SignalScorer(DEFAULTS);
    String prefix = "You are a coding agent.\n".repeat(20);
    List<String> turn1 = List.of(prefix, "first question about the build, long enough to be remembered by its key");
    List<String> turn2 = List.of(prefix, "first question about the build, long enough to be remembered by its key",
        "second question");
    AtomicInteger keyed = new AtomicInteger();
    PromptKeys keys = new PromptKeys();
    assertThat(scorer.score(turn1, text -> { keyed.incrementAndGet(); return keys.key(text); }, null, 0)).isNull();
    assertThat(scorer.score(turn2, text -> { keyed.incrementAndGet(); return keys.key(text); }, null, 0)).isNull();
    // Texts of 64 characters or more are looked up by key; the short new one is scanned directly.
    assertThat(keyed.get()).isEqualTo(4);
  }

  @Test
  void generatedRequestsFromRepeatingTextsScoreAsBefore() {
    Random random = new Random(28);
    List<String> pool = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      pool.add(generatedText(random));
    }
    for (ShapingConfig.SignalConfig config : List.of(DEFAULTS, STRICT,
        new ShapingConfig.SignalConfig(true, 2, 100, 3, 0.95, 2048, 0))) {
      SignalScorer scorer = new SignalScorer(config);
      SignalScorerBefore before = new SignalScorerBefore(config);
      int lowSignal = 0;
      for (int request = 0; request < 3_000; request++) {
        List<String> texts = new ArrayList<>();
        int n = 1 + random.nextInt(5);
        for (int i = 0; i < n; i++) {
          texts.add(pool.get(random.nextInt(pool.size())));
        }
        String expected = tag(before.score(texts, null, 0));
        assertThat(tag(scorer.score(texts, TextKey::of, null, 0))).as("request %d: %s", request, texts).isEqualTo(expected);
        lowSignal += expected != null ? 1 : 0;
      }
      // The generated mix reaches every finding and leaves some requests alone.
      assertThat(lowSignal).isBetween(1, 2_999);
    }
  }

  private static String generatedText(Random random) {
    String[] lines = {
      "// TODO: implement", "# TODO", "    pass  # TODO", "todo!()", "raise NotImplementedError", "...",
      "for item in items:", "    for other in items:", "        for third in items:", "            while x:",
      "                total += 1", "                break", "return total", "def run():",
      "for example: the prose kind", "The build fails on line 12 with a NullPointerException.",
      "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=",
      "aGVsbG8gd29ybGQgdGhpcyBpcyBhIGxvbmcgYmFzZTY0IGxpbmUgb2YgdGV4dCBmb3IgdGVzdGluZyBBQkM5",
      "while (true) {", "  for (int i = 0; i < n; i++) {", "    for (int j = 0; j < n; j++) {",
      "      for (int k = 0; k < n; k++) {", "        sum += i * j * k;", "      }", "    }", "  }", "}", "",
    };
    StringBuilder out = new StringBuilder();
    int count = 1 + random.nextInt(40);
    for (int i = 0; i < count; i++) {
      out.append(lines[random.nextInt(lines.length)]).append(random.nextInt(10) == 0 ? "\r\n" : "\n");
    }
    return out.toString();
  }

  private static String tag(SignalScorer.Reason reason) {
    return reason == null ? null : reason.tag();
  }

  private static String tag(SignalScorerBefore.Reason reason) {
    return reason == null ? null : reason.tag();
  }
}
