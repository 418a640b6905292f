package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.testing.PromptBodies;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.TokenCounter;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The trim decision keyed through the request's {@link PromptKeys} is the decision it was: whether
 * the client's texts exceed a limit, exactly, on each captured client body, at the limits around its
 * own count and at the tiers' default thresholds.
 */
class TrimDecisionKeysTest {
  /** The captured bodies shaping reads (a {@code count_tokens} call is answered before shaping). */
  static List<PromptBodies.Body> captured() {
    return PromptBodies.captured().stream().filter(body -> body.route() != Route.MESSAGES_COUNT_TOKENS).toList();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void theTrimDecisionOnACapturedBodyIsTheExactCountsVerdict(PromptBodies.Body body) {
    List<String> texts = PromptWalk.walk(body.route(), body.body()).texts();
    TokenCounter counter = TokenCounter.forModel(Json.text(body.body(), "model"));
    long total = 0;
    for (String text : texts) {
      total += counter.count(text);
    }
    PromptKeys keys = new PromptKeys();
    for (long limit : List.of(total - 1, total, total + 1, 1_000L, 32_000L, 64_000L)) {
      if (limit < 0) {
        continue;
      }
      boolean exceeds = total > limit;
      assertThat(counter.tally(131_072, keys).exceeds(texts, (int) limit)).as("limit %d", limit).isEqualTo(exceeds);
      assertThat(counter.tally(131_072).exceeds(texts, (int) limit)).as("limit %d, unkeyed", limit).isEqualTo(exceeds);
    }
  }
}
