package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.Route;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.testing.Golden;
import io.spillway.core.testing.PromptBodies;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.TextKey;
import io.spillway.shaping.signal.SignalScorer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Remembering each text's scan changes no score: the remembering scorer agrees with the scores the
 * scorer gave before its memo (recorded once in {@code golden/signal-scores.json}), on the bodies
 * captured from real clients and on generated requests whose texts repeat across requests (as an
 * agent's turns do), in every order.
 */
class SignalScorerMemoTest {
  private static final ShapingConfig.SignalConfig DEFAULTS = ShapingConfig.SignalConfig.DEFAULTS;
  private static final ShapingConfig.SignalConfig STRICT = new ShapingConfig.SignalConfig(true, 1, 64, 2, 0.95, 2048, 1_000);
  /** The configs the golden scores were recorded with, by their names in the golden file. */
  static final Map<String, ShapingConfig.SignalConfig> CONFIGS = Map.of("defaults", DEFAULTS, "strict", STRICT,
      "wide", new ShapingConfig.SignalConfig(true, 2, 100, 3, 0.95, 2048, 0));
  static final int GENERATED_REQUESTS = 3_000;

  /** The recorded scores, read on first use. */
  private static final class Recorded {
    static final ObjectNode SCORES = Golden.read("signal-scores.json");
  }

  /** The captured bodies shaping reads (a {@code count_tokens} call is answered before shaping). */
  static List<PromptBodies.Body> captured() {
    return PromptBodies.captured().stream().filter(body -> body.route() != Route.MESSAGES_COUNT_TOKENS).toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedClientBodyScoresAsBeforeColdAndRemembered(PromptBodies.Body body) {
    List<String> texts = PromptWalk.walk(body.route(), body.body()).texts();
    assertThat(texts).isNotEmpty();
    JsonNode recorded = Recorded.SCORES.path("captured").path(body.name());
    assertThat(recorded.isObject()).as("a golden score for %s", body.name()).isTrue();
    for (String name : List.of("defaults", "strict")) {
      SignalScorer scorer = new SignalScorer(CONFIGS.get(name));
      String before = recorded.get(name).isNull() ? null : recorded.get(name).textValue();
      assertThat(tag(scorer.score(texts, null, 0))).as(name).isEqualTo(before);
      assertThat(tag(scorer.score(texts, null, 0))).as(name + ", remembered").isEqualTo(before);
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
    for (String name : List.of("defaults", "strict", "wide")) {
      SignalScorer scorer = new SignalScorer(CONFIGS.get(name));
      JsonNode recorded = Recorded.SCORES.path("generated").path(name);
      assertThat(recorded.size()).as("golden scores for %s", name).isEqualTo(GENERATED_REQUESTS);
      int lowSignal = 0;
      for (int request = 0; request < GENERATED_REQUESTS; request++) {
        List<String> texts = generatedRequest(random, pool);
        String expected = recorded.get(request).isNull() ? null : recorded.get(request).textValue();
        assertThat(tag(scorer.score(texts, TextKey::of, null, 0))).as("%s, request %d: %s", name, request, texts)
            .isEqualTo(expected);
        lowSignal += expected != null ? 1 : 0;
      }
      // The generated mix reaches every finding and leaves some requests alone.
      assertThat(lowSignal).isBetween(1, GENERATED_REQUESTS - 1);
    }
  }

  /** One request: one to five texts drawn from {@code pool}, so texts repeat across requests. */
  static List<String> generatedRequest(Random random, List<String> pool) {
    List<String> texts = new ArrayList<>();
    int n = 1 + random.nextInt(5);
    for (int i = 0; i < n; i++) {
      texts.add(pool.get(random.nextInt(pool.size())));
    }
    return texts;
  }

  static String generatedText(Random random) {
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
}
