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
import io.spillway.core.testing.PromptBodies;
import io.spillway.core.tokens.TokenCounter;
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
 * when it walked the body itself (TokenEstimatorOwnWalk, the estimator just before, with
 * MessageTextsBefore for the Messages API), and so is {@code count_tokens}' answer: on every body
 * captured from a real client and the benchmark's, and on generated bodies of every route; with the
 * whole prompt tokenized, and with bounds on the tokenized characters that cut it short, where the
 * order in which texts reach the tally decides which are counted exactly. With the whole prompt
 * tokenized it is also the estimate from before tool definitions were remembered by structure
 * (TokenEstimatorBefore); within a bound that one differs by design (a short definition's count is
 * remembered now, so it no longer spends the bound).
 */
class PromptWalkEstimateTest {
  private static final List<Long> BOUNDS = List.of(0L, 8L, 40L, 200L, 1_000L);
  private static final AtomicInteger TAGS = new AtomicInteger();

  static List<PromptBodies.Body> captured() {
    return PromptBodies.captured();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("captured")
  void aCapturedBodyIsEstimatedAsBeforeAtEveryBound(PromptBodies.Body body) {
    long whole = estimatesAsBefore(body.route(), body.body());
    assertThat(whole).isPositive();
  }

  @Test
  void generatedBodiesOfEveryRouteAreEstimatedAsBeforeAtEveryBound() {
    Random random = new Random(28);
    long counted = 0;
    for (Route route : Route.values()) {
      for (int i = 0; i < 150; i++) {
        counted += estimatesAsBefore(route, PromptBodies.generated(random, route));
      }
    }
    // The generated bodies hold prompts, not only fields the estimate leaves out.
    assertThat(counted).isGreaterThan(10_000);
  }

  /**
   * Within a bound, the order in which a request's texts reach the tally decides which are counted
   * exactly; remembered counts spend none of it. So each body is estimated cold too: before and now
   * each get a copy whose every text carries a tag no other copy had (six digits, the same number of
   * tokens and characters in every copy), so neither finds a count the other left.
   */
  @Test
  void coldBodiesOfEveryRouteAreEstimatedAsBeforeAtEveryBound() {
    Random random = new Random(2828);
    List<ObjectNode> bodies = new ArrayList<>();
    List<Route> routes = new ArrayList<>();
    for (PromptBodies.Body body : PromptBodies.captured()) {
      bodies.add(body.body());
      routes.add(body.route());
    }
    for (Route route : Route.values()) {
      for (int i = 0; i < 60; i++) {
        bodies.add(PromptBodies.generated(random, route));
        routes.add(route);
      }
    }
    for (int i = 0; i < bodies.size(); i++) {
      Route route = routes.get(i);
      // What no tag changes (JSON values without a string) is remembered for both alike.
      new TokenEstimator(1024, Long.MAX_VALUE).estimate(request(route, tagged(bodies.get(i))));
      for (long max : BOUNDS) {
        ObjectNode forBefore = tagged(bodies.get(i));
        ObjectNode forNow = tagged(bodies.get(i));
        assertThat(new TokenEstimator(1024, max).estimate(request(route, forNow)).promptTokens())
            .as("%s, cold, at most %d characters tokenized: %s", route, max, forNow)
            .isEqualTo(new TokenEstimatorOwnWalk(1024, max).estimate(request(route, forBefore)).promptTokens());
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
   * The prompt's tokens before and now, first tokenized whole (by all, so that each later run finds
   * the same counts remembered), then at each bound. Returns the whole count.
   */
  private static long estimatesAsBefore(Route route, ObjectNode body) {
    TokenEstimatorBefore.Estimate first = new TokenEstimatorBefore(1024, Long.MAX_VALUE).estimate(request(route, body));
    long whole = -1;
    for (int bound = -1; bound < BOUNDS.size(); bound++) {
      long max = bound < 0 ? Long.MAX_VALUE : BOUNDS.get(bound);
      TokenEstimatorOwnWalk.Estimate before = new TokenEstimatorOwnWalk(1024, max).estimate(request(route, body));
      TokenEstimator.Estimate now = new TokenEstimator(1024, max).estimate(request(route, body));
      assertThat(now.promptTokens()).as("%s, at most %d characters tokenized: %s", route, max, body)
          .isEqualTo(before.promptTokens());
      assertThat(now.maxOutputTokens()).isEqualTo(before.maxOutputTokens());
      if (route == Route.MESSAGES || route == Route.MESSAGES_COUNT_TOKENS) {
        long counted = MessageTextsBefore.promptTokens(TokenCounter.forModel(Json.text(body, "model")).tally(max), body);
        assertThat(countTokens(request(route, body), max)).as("count_tokens, at most %d: %s", max, body)
            .isEqualTo(counted);
      }
      if (bound < 0) {
        whole = now.promptTokens();
        assertThat(whole).as("%s, whole, as before structure-keyed definitions: %s", route, body)
            .isEqualTo(first.promptTokens());
        assertThat(now.maxOutputTokens()).isEqualTo(first.maxOutputTokens());
      }
    }
    return whole;
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
