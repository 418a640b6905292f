package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.Route;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.testing.PromptBodies;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Shaping reads a request's texts from its one {@link PromptWalk}, and they are the texts it
 * collected when it walked the body itself (RequestTextsBefore, a verbatim copy): the very same
 * strings, in the same order, on every body captured from a real client and the benchmark's, and on
 * generated bodies of every route. Trimming's rewrite, which collects nothing any more, rewrites
 * what it rewrote, and only texts the walk read.
 */
class PromptWalkTextsTest {
  private static final List<Set<String>> ROLES = List.of(Set.of("user", "tool"), Set.of("user"), Set.of("tool"),
      Set.of("system", "developer", "user", "assistant", "tool"), Set.of());

  static List<PromptBodies.Body> captured() {
    return PromptBodies.captured();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedBodyHasTheTextsShapingCollectedBefore(PromptBodies.Body body) {
    List<String> texts = sameTextsAsBefore(body.route(), body.body());
    if (body.route() != Route.MESSAGES_COUNT_TOKENS) {
      assertThat(texts).isNotEmpty();
    }
    for (Set<String> roles : ROLES) {
      rewritesAsBefore(body.route(), body.body(), roles);
    }
  }

  @Test
  void generatedBodiesOfEveryRouteHaveTheTextsShapingCollectedBefore() {
    Random random = new Random(28);
    int read = 0;
    for (Route route : Route.values()) {
      for (int i = 0; i < 400; i++) {
        ObjectNode body = PromptBodies.generated(random, route);
        read += sameTextsAsBefore(route, body).size();
        rewritesAsBefore(route, body, ROLES.get(random.nextInt(ROLES.size())));
      }
    }
    // The generated bodies reach the rules, not only their fallbacks.
    assertThat(read).isGreaterThan(1_000);
  }

  /** The walk's texts are the strings RequestTextsBefore collected, each the same instance, in order. */
  private static List<String> sameTextsAsBefore(Route route, ObjectNode body) {
    List<String> before = new ArrayList<>();
    RequestTextsBefore.forEach(route, body, before::add);
    List<String> texts = PromptWalk.walk(route, body).texts();
    assertThat(texts).as("%s %s", route, body).isEqualTo(before);
    for (int i = 0; i < texts.size(); i++) {
      assertThat(texts.get(i)).as("%s text %d", route, i).isSameAs(before.get(i));
    }
    return texts;
  }

  /**
   * Trimming's rewrite changes the same texts as before, the same way, and each text it is handed is
   * one the walk read, in the walk's order.
   */
  private static void rewritesAsBefore(Route route, ObjectNode body, Set<String> roles) {
    ObjectNode now = body.deepCopy();
    ObjectNode before = body.deepCopy();
    List<String> seenNow = new ArrayList<>();
    List<String> seenBefore = new ArrayList<>();
    boolean changedNow = RequestTexts.rewrite(route, now, roles, (text, kind) -> {
      seenNow.add(kind + ":" + text);
      return text.length() % 3 == 0 ? text : "[" + kind + " " + text.length() + "]";
    });
    boolean changedBefore = RequestTextsBefore.rewrite(route, before, roles, (text, kind) -> {
      seenBefore.add(kind + ":" + text);
      return text.length() % 3 == 0 ? text : "[" + kind + " " + text.length() + "]";
    });
    assertThat(seenNow).as("%s %s", route, roles).isEqualTo(seenBefore);
    assertThat(changedNow).isEqualTo(changedBefore);
    assertThat(now).isEqualTo(before);

    List<String> handed = new ArrayList<>();
    RequestTexts.rewrite(route, body.deepCopy(), roles, (text, kind) -> {
      handed.add(text);
      return text;
    });
    List<String> read = PromptWalk.walk(route, body).texts();
    int at = 0;
    for (String text : handed) {
      while (at < read.size() && read.get(at) != text) {
        at++;
      }
      assertThat(at).as("%s: a trimmed text the walk did not read, or out of its order: %s", route, text)
          .isLessThan(read.size());
      at++;
    }
  }
}
