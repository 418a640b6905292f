package io.spillway.shaping;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.Golden;
import io.spillway.core.testing.PromptBodies;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GoldenTextsWriterTest {
  static final List<Set<String>> ROLES = List.of(Set.of("user", "tool"), Set.of("user"), Set.of("tool"),
      Set.of("system", "developer", "user", "assistant", "tool"), Set.of());

  @Test
  void write() throws Exception {
    Path dir = Path.of("src/test/resources/golden");
    Files.createDirectories(dir);
    StringBuilder out = new StringBuilder("{\n");
    out.append("  \"producedBy\": \"RequestTextsBefore (shaping's own walk of a body, before the one PromptWalk) as a test oracle at da4df5e, 2026-12-02\",\n");
    out.append("  \"doNotRegenerate\": \"Recorded once from the oracle then in the test tree; never regenerate this file from the current code to make a failing test pass: a changed text or rewrite is a behaviour change to be judged.\",\n");
    out.append("  \"rewriter\": \"a text whose length is a multiple of 3 is kept, any other becomes [kind length]; seen lists kind:text\",\n");
    out.append("  \"roles\": ").append(Json.MAPPER.writeValueAsString(ROLES.stream().map(r -> r.stream().sorted().toList()).toList())).append(",\n");
    out.append("  \"bodies\": [\n");
    List<String> lines = new ArrayList<>();
    for (PromptBodies.Body body : PromptBodies.captured()) {
      ObjectNode line = texts(body.name(), body.route(), body.body());
      ArrayNode rewrites = line.putArray("rewrites");
      for (Set<String> roles : ROLES) {
        rewrites.add(rewrite(body.route(), body.body(), roles));
      }
      lines.add("    " + line);
    }
    Random random = new Random(28);
    for (Route route : Route.values()) {
      for (int i = 0; i < 120; i++) {
        ObjectNode body = PromptBodies.generated(random, route);
        ObjectNode line = texts("generated " + route + " " + i, route, body);
        int pick = random.nextInt(ROLES.size());
        line.put("roles", pick);
        line.putArray("rewrites").add(rewrite(route, body, ROLES.get(pick)));
        lines.add("    " + line);
      }
    }
    out.append(String.join(",\n", lines)).append("\n  ]\n}\n");
    Files.writeString(dir.resolve("request-texts.json"), out);
  }

  private static ObjectNode texts(String name, Route route, ObjectNode body) {
    List<String> texts = new ArrayList<>();
    RequestTextsBefore.forEach(route, body, texts::add);
    return Json.object().put("name", name).put("route", route.name()).put("body", Golden.digest(body))
        .put("texts", texts.size()).put("textsDigest", Golden.digest(texts));
  }

  private static ObjectNode rewrite(Route route, ObjectNode body, Set<String> roles) {
    ObjectNode copy = body.deepCopy();
    List<String> seen = new ArrayList<>();
    boolean changed = RequestTextsBefore.rewrite(route, copy, roles, (text, kind) -> {
      seen.add(kind + ":" + text);
      return text.length() % 3 == 0 ? text : "[" + kind + " " + text.length() + "]";
    });
    return Json.object().put("seen", seen.size()).put("seenDigest", Golden.digest(seen)).put("changed", changed)
        .put("rewritten", Golden.digest(copy));
  }
}
