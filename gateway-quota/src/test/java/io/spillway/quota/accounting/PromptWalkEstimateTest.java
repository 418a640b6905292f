package io.spillway.quota.accounting;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.spillway.core.api.anthropic.CountTokens;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.testing.Golden;
import io.spillway.core.testing.PromptBodies;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The estimate counted from the request's one {@link PromptWalk} is the estimate the estimator made
 * when it walked the body itself (the estimator at cffd118), and so is {@code count_tokens}' answer:
 * on every body captured from a real client and the benchmark's, and on generated bodies of every
 * route; with the whole prompt tokenized, and with bounds on the tokenized characters that cut it
 * short, where the order in which texts reach the tally decides which are counted exactly. With the
 * whole prompt tokenized it is also the estimate from before tool definitions were remembered by
 * structure (the estimator at a85f4a1). The expected numbers are in the golden file
 * {@code golden/prompt-estimates.json}, recorded from those estimators; a body whose digest differs
 * from the recorded one means the bodies changed, not the estimate.
 */
class PromptWalkEstimateTest {
  private static final AtomicInteger TAGS = new AtomicInteger();
  private static final ObjectNode GOLDEN = Golden.read("prompt-estimates.json");
  private static final List<Long> BOUNDS = longs(GOLDEN.get("bounds"));

  static List<PromptBodies.Body> captured() {
    return PromptBodies.captured();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedBodyIsEstimatedAsBeforeAtEveryBound(PromptBodies.Body body) {
    long whole = estimatesAsBefore(golden("warm", body.name(), body.body()), body.route(), body.body());
    assertThat(whole).isPositive();
  }

  @Test
  void generatedBodiesOfEveryRouteAreEstimatedAsBeforeAtEveryBound() {
    Random random = new Random(28);
    long counted = 0;
    for (Route route : Route.values()) {
      for (int i = 0; i < 150; i++) {
        ObjectNode body = PromptBodies.generated(random, route);
        counted += estimatesAsBefore(golden("warm", "generated " + route + " " + i, body), route, body);
      }
    }
    // The generated bodies hold prompts, not only fields the estimate leaves out.
    assertThat(counted).isGreaterThan(10_000);
  }

  /**
   * Within a bound, the order in which a request's texts reach the tally decides which are counted
   * exactly; remembered counts spend none of it. So each body is estimated cold too: each estimate
   * gets a copy whose every text carries a tag no other copy had (six digits, the same number of
   * tokens and characters in every copy, and as when the golden file was recorded), so it finds no
   * count an earlier one left.
   */
  @Test
  void coldBodiesOfEveryRouteAreEstimatedAsBeforeAtEveryBound() {
    Random random = new Random(2828);
    List<PromptBodies.Body> bodies = new ArrayList<>(PromptBodies.captured());
    for (Route route : Route.values()) {
      for (int i = 0; i < 60; i++) {
        bodies.add(new PromptBodies.Body("generated " + route + " " + i, route, PromptBodies.generated(random, route)));
      }
    }
    for (PromptBodies.Body body : bodies) {
      JsonNode expected = golden("cold", body.name(), body.body());
      Route route = body.route();
      // What no tag changes (JSON values without a string) is remembered alike, as when recorded.
      new TokenEstimator(1024, Long.MAX_VALUE).estimate(request(route, tagged(body.body())));
      for (int bound = 1; bound < BOUNDS.size(); bound++) {
        long max = BOUNDS.get(bound);
        ObjectNode forNow = tagged(body.body());
        assertThat(new TokenEstimator(1024, max).estimate(request(route, forNow)).promptTokens())
            .as("%s, cold, at most %d characters tokenized", body.name(), max)
            .isEqualTo(expected.get("promptTokens").get(bound - 1).asLong());
      }
    }
  }

  @Test
  void theEstimateAndCountTokensOfOneRequestShareItsWalk() {
    GatewayRequest request = request(Route.MESSAGES_COUNT_TOKENS, PromptBodies.captured().stream()
        .filter(body -> body.route() == Route.MESSAGES_COUNT_TOKENS).findFirst().orElseThrow().body());
    PromptWalk walk = PromptWalk.of(request);
    long estimated = new TokenEstimator(1024).estimate(request).promptTokens();
    assertThat(countTokens(request, Long.MAX_VALUE)).isEqualTo(estimated);
    assertThat(PromptWalk.of(request)).isSameAs(walk);
  }

  /**
   * The prompt's tokens now, first tokenized whole (so that each later run finds the counts
   * remembered, as when the golden file was recorded), then at each bound, against the golden
   * numbers; for the Messages API count_tokens' answer too. Returns the whole count.
   */
  private static long estimatesAsBefore(JsonNode expected, Route route, ObjectNode body) {
    for (int bound = 0; bound < BOUNDS.size(); bound++) {
      long max = BOUNDS.get(bound);
      TokenEstimator.Estimate now = new TokenEstimator(1024, max).estimate(request(route, body));
      assertThat(now.promptTokens()).as("%s, at most %d characters tokenized", expected.get("name").asText(), max)
          .isEqualTo(expected.get("promptTokens").get(bound).asLong());
      assertThat(now.maxOutputTokens()).isEqualTo(expected.get("maxOutputTokens").asLong());
      if (route == Route.MESSAGES || route == Route.MESSAGES_COUNT_TOKENS) {
        assertThat(countTokens(request(route, body), max))
            .as("%s, count_tokens, at most %d", expected.get("name").asText(), max)
            .isEqualTo(expected.get("countTokens").get(bound).asLong());
      }
    }
    return expected.get("promptTokens").get(0).asLong();
  }

  private static JsonNode golden(String section, String name, ObjectNode body) {
    JsonNode expected = golden(section, name);
    assertThat(Golden.digest(body)).as("the body %s is the one the golden file was recorded from", name)
        .isEqualTo(expected.get("body").asText());
    return expected;
  }

  private static JsonNode golden(String section, String name) {
    for (JsonNode entry : GOLDEN.get(section)) {
      if (entry.get("name").asText().equals(name)) {
        return entry;
      }
    }
    throw new AssertionError("no golden " + section + " estimate for " + name);
  }

  private static List<Long> longs(JsonNode array) {
    List<Long> out = new ArrayList<>();
    array.forEach(value -> out.add(value.asLong()));
    return List.copyOf(out);
  }

  private static long countTokens(GatewayRequest request, long maxTokenizedChars) {
    GatewayResponse answer = new CountTokens(maxTokenizedChars).handle(request).toCompletableFuture().join();
    try {
      return Json.parse(answer.body()).get("input_tokens").asLong();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * A copy of {@code body} whose every string but a {@code type} carries a new tag: " #" and two
   * groups of three digits, each group one token.
   */
  private static ObjectNode tagged(ObjectNode body) {
    int tag = TAGS.getAndIncrement();
    return (ObjectNode) tagged(body, " #" + (100 + tag / 900) + (100 + tag % 900));
  }

  private static JsonNode tagged(JsonNode node, String tag) {
    if (node.isTextual()) {
      return TextNode.valueOf(node.textValue() + tag);
    }
    if (node instanceof ArrayNode array) {
      ArrayNode copy = array.arrayNode();
      array.forEach(item -> copy.add(tagged(item, tag)));
      return copy;
    }
    if (node instanceof ObjectNode object) {
      ObjectNode copy = object.objectNode();
      for (Map.Entry<String, JsonNode> field : object.properties()) {
        copy.set(field.getKey(), field.getKey().equals("type") ? field.getValue() : tagged(field.getValue(), tag));
      }
      return copy;
    }
    return node;
  }

  private static GatewayRequest request(Route route, ObjectNode body) {
    return GatewayRequest.create("req", route, Headers.EMPTY, body, null, Instant.EPOCH);
  }
}
