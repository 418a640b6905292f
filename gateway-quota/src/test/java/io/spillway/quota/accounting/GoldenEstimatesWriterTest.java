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
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.Golden;
import io.spillway.core.testing.PromptBodies;
import io.spillway.core.tokens.TokenCounter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class GoldenEstimatesWriterTest {
  static final List<Long> BOUNDS = List.of(Long.MAX_VALUE, 0L, 8L, 40L, 200L, 1_000L);
  static final AtomicInteger TAGS = new AtomicInteger();
  static final String HEAD = "  \"producedBy\": \"%s\",\n  \"doNotRegenerate\": \"Recorded once from the oracles then in the test tree; never regenerate this file from the current code to make a failing test pass: a changed estimate is a behaviour change to be judged.\",\n";

  @Test
  void write() throws Exception {
    Path dir = Path.of("src/test/resources/golden");
    Files.createDirectories(dir);
    StringBuilder out = new StringBuilder("{\n");
    out.append(HEAD.formatted("TokenEstimatorOwnWalk (the estimator at cffd118, whose whole-prompt estimates were checked equal to TokenEstimatorBefore, the estimator at a85f4a1) and MessageTextsBefore (count_tokens), as test oracles at da4df5e, 2026-12-02"));
    out.append("  \"bounds\": ").append(Json.MAPPER.writeValueAsString(BOUNDS)).append(",\n");
    out.append("  \"warm\": [\n");
    List<String> lines = new ArrayList<>();
    for (PromptBodies.Body body : PromptBodies.captured()) {
      lines.add(warm(body.name(), body.route(), body.body()));
    }
    Random random = new Random(28);
    for (Route route : Route.values()) {
      for (int i = 0; i < 150; i++) {
        lines.add(warm("generated " + route + " " + i, route, PromptBodies.generated(random, route)));
      }
    }
    out.append(String.join(",\n", lines)).append("\n  ],\n  \"cold\": [\n");
    lines.clear();
    for (PromptBodies.Body body : PromptBodies.captured()) {
      lines.add(cold(body.name(), body.route(), body.body()));
    }
    random = new Random(2828);
    for (Route route : Route.values()) {
      for (int i = 0; i < 60; i++) {
        lines.add(cold("generated " + route + " " + i, route, PromptBodies.generated(random, route)));
      }
    }
    out.append(String.join(",\n", lines)).append("\n  ]\n}\n");
    Files.writeString(dir.resolve("prompt-estimates.json"), out);

    StringBuilder a = new StringBuilder("{\n");
    a.append(HEAD.formatted("TokenEstimatorBefore (the estimator at a85f4a1, 1024 default output tokens, at most 131072 characters tokenized) as a test oracle at da4df5e, 2026-12-02"));
    a.append("  \"captured\": [\n");
    lines.clear();
    for (var args : TokenEstimatorBeforeAfterTest.captured().toList()) {
      Object[] v = args.get();
      TokenEstimatorBefore.Estimate e = new TokenEstimatorBefore(1024, 131_072)
          .estimate(TokenEstimatorBeforeAfterTestRequest.of((Route) v[1], (byte[]) v[2]));
      ObjectNode line = Json.object().put("name", (String) v[0]).put("body", Golden.digest(Json.parse((byte[]) v[2])))
          .put("promptTokens", e.promptTokens()).put("maxOutputTokens", e.maxOutputTokens());
      lines.add("    " + line);
    }
    a.append(String.join(",\n", lines)).append("\n  ],\n");
    String tools = """
        {"model":"gpt-4o","messages":[{"role":"user","content":"What is the weather in Paris, and in Lyon?"}],
         "tools":[{"type":"function","function":{"name":"weather","description":"The weather in a city, now",
           "parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},
           "required":["city"]},"strict":true}}],
         "functions":[{"name":"legacy","parameters":{"type":"object","properties":{"n":{"type":"number","minimum":1.5}}}}],
         "response_format":{"type":"json_schema","json_schema":{"name":"answer","schema":{"type":"object"}}}}
        """;
    String respelled = tools.replace("\"weather\",", "\"weath\\u0065r\" ,").replace("[\"c\",\"f\"]", "[ \"c\" , \"f\" ]");
    String reordered = tools.replace("\"required\":[\"city\"]},\"strict\":true", "\"required\":[\"city\"]},\"strict\":false");
    TokenEstimatorBefore before = new TokenEstimatorBefore(1024, 131_072);
    ArrayNode defs = Json.MAPPER.createArrayNode();
    for (String spelling : List.of(tools, respelled, reordered)) {
      defs.add(before.estimate(TokenEstimatorBeforeAfterTestRequest.of(Route.CHAT_COMPLETIONS, spelling.getBytes())).promptTokens());
    }
    a.append("  \"toolDefinitions\": ").append(defs).append("\n}\n");
    Files.writeString(dir.resolve("estimates-a85f4a1.json"), a);
  }

  private static String warm(String name, Route route, ObjectNode body) {
    TokenEstimatorBefore.Estimate first = new TokenEstimatorBefore(1024, Long.MAX_VALUE).estimate(request(route, body));
    ObjectNode line = Json.object().put("name", name).put("route", route.name()).put("body", Golden.digest(body));
    ArrayNode prompt = line.putArray("promptTokens");
    ArrayNode counted = Json.MAPPER.createArrayNode();
    for (long max : BOUNDS) {
      TokenEstimatorOwnWalk.Estimate before = new TokenEstimatorOwnWalk(1024, max).estimate(request(route, body));
      TokenEstimator.Estimate now = new TokenEstimator(1024, max).estimate(request(route, body));
      assertThat(now.promptTokens()).isEqualTo(before.promptTokens());
      assertThat(now.maxOutputTokens()).isEqualTo(before.maxOutputTokens());
      prompt.add(before.promptTokens());
      if (max == Long.MAX_VALUE) {
        assertThat(before.promptTokens()).isEqualTo(first.promptTokens());
        assertThat(before.maxOutputTokens()).isEqualTo(first.maxOutputTokens());
        line.put("maxOutputTokens", before.maxOutputTokens());
      }
      if (route == Route.MESSAGES || route == Route.MESSAGES_COUNT_TOKENS) {
        long c = MessageTextsBefore.promptTokens(TokenCounter.forModel(Json.text(body, "model")).tally(max), body);
        assertThat(countTokens(request(route, body), max)).isEqualTo(c);
        counted.add(c);
      }
    }
    if (!counted.isEmpty()) {
      line.set("countTokens", counted);
    }
    return "    " + line;
  }

  private static long countTokens(GatewayRequest request, long max) {
    try {
      return Json.parse(new CountTokens(max).handle(request).toCompletableFuture().join().body()).get("input_tokens").asLong();
    } catch (java.io.IOException e) {
      throw new AssertionError(e);
    }
  }

  private static String cold(String name, Route route, ObjectNode body) {
    new TokenEstimator(1024, Long.MAX_VALUE).estimate(request(route, tagged(body)));
    ObjectNode line = Json.object().put("name", name).put("route", route.name()).put("body", Golden.digest(body));
    ArrayNode prompt = line.putArray("promptTokens");
    for (long max : BOUNDS.subList(1, BOUNDS.size())) {
      ObjectNode forBefore = tagged(body);
      ObjectNode forNow = tagged(body);
      long before = new TokenEstimatorOwnWalk(1024, max).estimate(request(route, forBefore)).promptTokens();
      assertThat(new TokenEstimator(1024, max).estimate(request(route, forNow)).promptTokens()).isEqualTo(before);
      prompt.add(before);
    }
    return "    " + line;
  }

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

  static GatewayRequest request(Route route, ObjectNode body) {
    return GatewayRequest.create("req", route, Headers.EMPTY, body, null, Instant.EPOCH);
  }

  static final class TokenEstimatorBeforeAfterTestRequest {
    static GatewayRequest of(Route route, byte[] bytes) throws java.io.IOException {
      return GatewayRequest.create("req", route, Headers.of("content-type", "application/json"),
          (ObjectNode) Json.parse(bytes), bytes, Instant.EPOCH);
    }
  }
}
