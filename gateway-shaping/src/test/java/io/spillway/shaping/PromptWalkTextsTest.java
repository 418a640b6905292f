package io.spillway.shaping;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.Route;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.testing.Golden;
import io.spillway.core.testing.PromptBodies;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Shaping reads a request's texts from its one {@link PromptWalk}, and they are the texts it
 * collected when it walked the body itself (recorded from that walk in the golden file
 * {@code golden/request-texts.json}): the same texts in the same order, each the very string the
 * body holds (no copy), on every body captured from a real client and the benchmark's, and on
 * generated bodies of every route. Trimming's rewrite, which collects nothing any more, rewrites what
 * it rewrote, and only texts the walk read. A body whose digest differs from the recorded one means
 * the bodies changed, not the texts.
 */
class PromptWalkTextsTest {
  private static final ObjectNode GOLDEN = Golden.read("request-texts.json");
  private static final List<Set<String>> ROLES = roles(GOLDEN.get("roles"));

  static List<PromptBodies.Body> captured() {
    return PromptBodies.captured();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedBodyHasTheTextsShapingCollectedBefore(PromptBodies.Body body) {
    JsonNode expected = golden(body.name(), body.body());
    List<String> texts = sameTextsAsBefore(expected, body.route(), body.body());
    if (body.route() != Route.MESSAGES_COUNT_TOKENS) {
      assertThat(texts).isNotEmpty();
    }
    for (int i = 0; i < ROLES.size(); i++) {
      rewritesAsBefore(expected.get("rewrites").get(i), body.route(), body.body(), ROLES.get(i));
    }
  }

  @Test
  void generatedBodiesOfEveryRouteHaveTheTextsShapingCollectedBefore() {
    Random random = new Random(28);
    int read = 0;
    for (Route route : Route.values()) {
      for (int i = 0; i < 120; i++) {
        ObjectNode body = PromptBodies.generated(random, route);
        JsonNode expected = golden("generated " + route + " " + i, body);
        read += sameTextsAsBefore(expected, route, body).size();
        int roles = random.nextInt(ROLES.size());
        assertThat(roles).isEqualTo(expected.get("roles").asInt());
        rewritesAsBefore(expected.get("rewrites").get(0), route, body, ROLES.get(roles));
      }
    }
    // The generated bodies reach the rules, not only their fallbacks.
    assertThat(read).isGreaterThan(300);
  }

  /**
   * The walk's texts are those recorded (their number and digest), and each is the very string the
   * body holds, not a copy.
   */
  private static List<String> sameTextsAsBefore(JsonNode expected, Route route, ObjectNode body) {
    List<String> texts = PromptWalk.walk(route, body).texts();
    assertThat(texts).as("%s %s", route, body).hasSize(expected.get("texts").asInt());
    assertThat(Golden.digest(texts)).as("%s %s", route, body).isEqualTo(expected.get("textsDigest").asText());
    Set<String> held = Collections.newSetFromMap(new IdentityHashMap<>());
    collectStrings(body, held);
    for (int i = 0; i < texts.size(); i++) {
      assertThat(held).as("%s text %d is a string of the body itself", route, i).contains(texts.get(i));
    }
    return texts;
  }

  /**
   * Trimming's rewrite changes the same texts as before, the same way, and each text it is handed is
   * one the walk read, in the walk's order.
   */
  private static void rewritesAsBefore(JsonNode expected, Route route, ObjectNode body, Set<String> roles) {
    ObjectNode now = body.deepCopy();
    List<String> seenNow = new ArrayList<>();
    boolean changedNow = RequestTexts.rewrite(route, now, roles, (text, kind) -> {
      seenNow.add(kind + ":" + text);
      return text.length() % 3 == 0 ? text : "[" + kind + " " + text.length() + "]";
    });
    assertThat(seenNow).as("%s %s", route, roles).hasSize(expected.get("seen").asInt());
    assertThat(Golden.digest(seenNow)).as("%s %s: %s", route, roles, seenNow)
        .isEqualTo(expected.get("seenDigest").asText());
    assertThat(changedNow).isEqualTo(expected.get("changed").asBoolean());
    assertThat(Golden.digest(now)).as("%s %s rewritten: %s", route, roles, now)
        .isEqualTo(expected.get("rewritten").asText());

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

  private static void collectStrings(JsonNode node, Set<String> held) {
    if (node.isTextual()) {
      held.add(node.textValue());
    }
    node.forEach(child -> collectStrings(child, held));
  }

  private static JsonNode golden(String name, ObjectNode body) {
    for (JsonNode entry : GOLDEN.get("bodies")) {
      if (entry.get("name").asText().equals(name)) {
        assertThat(Golden.digest(body)).as("the body %s is the one the golden file was recorded from", name)
            .isEqualTo(entry.get("body").asText());
        return entry;
      }
    }
    throw new AssertionError("no golden texts for " + name);
  }

  private static List<Set<String>> roles(JsonNode sets) {
    List<Set<String>> out = new ArrayList<>();
    for (JsonNode set : sets) {
      Set<String> roles = new HashSet<>();
      set.forEach(role -> roles.add(role.asText()));
      out.add(Set.copyOf(roles));
    }
    return List.copyOf(out);
  }
}
