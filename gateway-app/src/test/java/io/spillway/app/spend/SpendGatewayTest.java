package io.spillway.app.spend;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.BRONZE_KEY;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Matcher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Spend through the real gateway: the price table applied to the usage the cloud settles (cached
 * prompt tokens at their own price, streams included), local answers at 0, money budgets per team.
 */
class SpendGatewayTest {
  /** gpt-4o at the shipped prices: 6 000 uncached x 2.50 + 4 000 cached x 1.25 + 1 000 out x 10.00 per million. */
  private static final double GPT_4O_COST = (6_000 * 2.50 + 4_000 * 1.25 + 1_000 * 10.00) / 1_000_000;
  private static final long SECONDS_TO_DECEMBER =
      Duration.between(Instant.parse("2026-11-10T10:00:00Z"), Instant.parse("2026-12-01T00:00:00Z")).toSeconds();
  private static final String BIG_POOLS = "quota: {monthlyTokens: 100000000}\n";

  private LogCapture logs;

  @BeforeEach
  void capture() {
    logs = new LogCapture();
  }

  @AfterEach
  void stop() {
    logs.close();
  }

  record Caller(String key, String team, String tier) {}

  static List<Caller> callers() {
    return List.of(new Caller(GOLD_KEY, "release", "gold"), new Caller(SILVER_KEY, "web", "silver"),
        new Caller(BRONZE_KEY, "sandbox", "bronze"));
  }

  static List<Arguments> callersAndShapes() {
    return callers().stream().flatMap(c -> List.of(Arguments.of(c, false), Arguments.of(c, true)).stream()).toList();
  }

  private static String chatUsage(int prompt, int cached, int completion) {
    return "{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + completion + ",\"total_tokens\":"
        + (prompt + completion) + ",\"prompt_tokens_details\":{\"cached_tokens\":" + cached + ",\"audio_tokens\":0}}";
  }

  /** A gpt-4o answer that used 10 000 prompt tokens (4 000 from OpenAI's prompt cache) and 1 000 completion tokens. */
  private static ResponseDefinitionBuilder cachedGpt4oAnswer(boolean stream) {
    String usage = chatUsage(10_000, 4_000, 1_000);
    if (!stream) {
      String body = OpenAiStubs.chatCompletionBody("Done", 10_000, 1_000)
          .replaceFirst("\"usage\":\\{[^}]*}", "\"usage\":" + Matcher.quoteReplacement(usage));
      return OpenAiStubs.json(200, body);
    }
    String body = OpenAiStubs.chatStreamBody(true, "Do", "ne")
        .replaceFirst("\"usage\":\\{[^}]*}}", "\"usage\":" + Matcher.quoteReplacement(usage) + "}");
    return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body);
  }

  private static JsonNode spend(GatewayHarness h) throws IOException {
    HttpResponse<String> report = h.get("/admin/quota", ADMIN_TOKEN);
    assertThat(report.statusCode()).isEqualTo(200);
    return Json.parse(report.body()).get("spend");
  }

  private JsonNode lastAccessLine(int count) throws IOException {
    await().atMost(Duration.ofSeconds(5)).until(() -> logs.accessLines().size() >= count);
    List<String> lines = logs.accessLines();
    return Json.parse(lines.get(lines.size() - 1));
  }

  private static double metric(GatewayHarness h, String name, String... labels) {
    String text = h.get("/metrics", null).body();
    double sum = 0;
    for (String line : text.split("\n")) {
      if (!line.startsWith(name + "{")) {
        continue;
      }
      boolean all = true;
      for (int i = 0; i < labels.length; i += 2) {
        all &= line.contains(labels[i] + "=\"" + labels[i + 1] + "\"");
      }
      if (all) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }

  @ParameterizedTest(name = "{0} stream={1}")
  @MethodSource("callersAndShapes")
  void aCloudAnswerCostsItsSettledUsageWithCachedPromptTokensAtTheCachedPrice(Caller caller, boolean stream)
      throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(stream)));

      HttpResponse<String> response = h.post("/v1/chat/completions", caller.key(),
          chatBody("gpt-4o", "Review this diff", stream));

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains(stream ? "ne" : "Done");
      JsonNode line = lastAccessLine(1);
      assertThat(line.get("backend").asText()).isEqualTo("cloud");
      assertThat(line.get("costUsd").asDouble()).isCloseTo(GPT_4O_COST, within(1e-12));
      JsonNode spend = spend(h);
      assertThat(spend.at("/teams/" + caller.team() + "/usd").asDouble()).isCloseTo(GPT_4O_COST, within(1e-12));
      assertThat(spend.at("/teams/" + caller.team() + "/byTier/" + caller.tier()).asDouble())
          .isCloseTo(GPT_4O_COST, within(1e-12));
      assertThat(spend.at("/tiers/" + caller.tier() + "/usd").asDouble()).isCloseTo(GPT_4O_COST, within(1e-12));
      assertThat(spend.get("currency").asText()).isEqualTo("USD");
      assertThat(metric(h, "spillway_spend_usd_total", "tier", caller.tier(), "backend", "cloud", "model", "gpt-4o"))
          .isCloseTo(GPT_4O_COST, within(1e-12));
      assertThat(h.get("/metrics", null).body()).as("teams are not a metric tag")
          .doesNotContain("spillway_spend_usd_total{team");
    }
  }

  @Test
  void aResponsesAnswerIsPricedFromInputTokensDetailsAndItsDatedModelName() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS)) {
      String body = OpenAiStubs.responseBody("Done")
          .replace("\"input_tokens\":36,\"input_tokens_details\":{\"cached_tokens\":0}",
              "\"input_tokens\":20000,\"input_tokens_details\":{\"cached_tokens\":10000}")
          .replace("\"output_tokens\":87", "\"output_tokens\":500");
      h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.json(200, body)));

      HttpResponse<String> response = h.post("/v1/responses", SILVER_KEY,
          "{\"model\":\"gpt-4.1-2025-04-14\",\"input\":\"Summarise the build log\"}");

      assertThat(response.statusCode()).isEqualTo(200);
      double expected = (10_000 * 2.00 + 10_000 * 0.50 + 500 * 8.00) / 1_000_000;
      assertThat(lastAccessLine(1).get("costUsd").asDouble()).isCloseTo(expected, within(1e-12));
      assertThat(spend(h).at("/teams/web/usd").asDouble()).isCloseTo(expected, within(1e-12));
    }
  }

  @Test
  void aResponsesStreamIsPricedFromItsCompletedEvent() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS)) {
      String completed = OpenAiStubs.responseBody("Done").replace("\n", " ").strip()
          .replace("\"input_tokens\":36,\"input_tokens_details\":{\"cached_tokens\":0}",
              "\"input_tokens\":20000,\"input_tokens_details\":{\"cached_tokens\":10000}")
          .replace("\"output_tokens\":87", "\"output_tokens\":500");
      String stream = "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
          + "\"sequence_number\":1,\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"Done\"}\n\n"
          + "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":"
          + completed + "}\n\n";
      h.cloud.stubFor(post("/v1/responses").willReturn(aResponse().withStatus(200)
          .withHeader("Content-Type", "text/event-stream").withBody(stream)));

      HttpResponse<String> response = h.post("/v1/responses", BRONZE_KEY,
          "{\"model\":\"gpt-4.1\",\"stream\":true,\"input\":\"Summarise the build log\"}");

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).contains("response.completed");
      double expected = (10_000 * 2.00 + 10_000 * 0.50 + 500 * 8.00) / 1_000_000;
      assertThat(lastAccessLine(1).get("costUsd").asDouble()).isCloseTo(expected, within(1e-12));
      assertThat(spend(h).at("/teams/sandbox/byTier/bronze").asDouble()).isCloseTo(expected, within(1e-12));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("callers")
  void anAnswerServedByTheLocalBackendCostsNothing(Caller caller) throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS + "local: {kind: openai}")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      h.ollama.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));

      HttpResponse<String> response = h.post("/v1/chat/completions", caller.key(),
          chatBody("gpt-4o", "Review this diff", false));

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).contains("local");
      JsonNode line = lastAccessLine(1);
      assertThat(line.get("backend").asText()).isEqualTo("local");
      assertThat(line.get("promptTokens").asInt()).isEqualTo(10_000);
      assertThat(line.get("costUsd").asDouble()).isZero();
      JsonNode spend = spend(h);
      assertThat(spend.at("/teams/" + caller.team() + "/usd").asDouble()).isZero();
      assertThat(spend.at("/tiers/" + caller.tier() + "/unpricedRequests").asLong()).isZero();
      assertThat(h.get("/metrics", null).body())
          .containsPattern("spillway_spend_usd_total\\{[^}]*backend=\"local\"[^}]*tier=\"" + caller.tier() + "\"[^}]*} 0\\.0");
    }
  }

  @Test
  void aCloudModelWithoutAPriceCostsNothingAndIsCountedAsUnpriced() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));

      h.post("/v1/chat/completions", BRONZE_KEY, chatBody("ft:gpt-4o:acme:reviewer", "Review this diff", false));

      assertThat(lastAccessLine(1).get("costUsd").asDouble()).isZero();
      JsonNode spend = spend(h);
      assertThat(spend.at("/tiers/bronze/unpricedRequests").asLong()).isEqualTo(1);
      assertThat(metric(h, "spillway_spend_unpriced_total", "tier", "bronze")).isEqualTo(1.0);
    }
  }

  @Test
  void anUnpricedModelIsNamedInAdminQuotaRatherThanCountedAsZeroSilently() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));

      h.post("/v1/chat/completions", BRONZE_KEY, chatBody("ft:gpt-4o:acme:reviewer", "Review this diff", false));
      h.post("/v1/chat/completions", BRONZE_KEY, chatBody("ft:gpt-4o:acme:reviewer", "Review this diff", false));

      assertThat(spend(h).path("unpricedModels").path("ft:gpt-4o:acme:reviewer").asLong()).isEqualTo(2);
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("callers")
  void theCodexModelIsPricedAtItsPublishedPrice(Caller caller) throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));

      h.post("/v1/chat/completions", caller.key(), chatBody("gpt-5.5", "Review this diff", false));

      // 10 000 prompt tokens of which 4 000 cached, 1 000 completion tokens (the fixture's usage)
      double expected = (6_000 * 5.00 + 4_000 * 0.50 + 1_000 * 30.00) / 1_000_000;
      assertThat(lastAccessLine(1).get("costUsd").asDouble()).isCloseTo(expected, within(1e-12));
      JsonNode spend = spend(h);
      assertThat(spend.at("/tiers/" + caller.tier() + "/unpricedRequests").asLong()).isZero();
      assertThat(spend.path("unpricedModels").size()).isZero();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("callers")
  void eachTeamsRequestsAndTokensStandBesideItsMoney(Caller caller) throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));

      h.post("/v1/chat/completions", caller.key(), chatBody("gpt-4o", "Review this diff", false));
      h.post("/v1/chat/completions", caller.key(), chatBody("gpt-4o", "Review that diff", false));

      JsonNode team = spend(h).path("teams").path(caller.team());
      assertThat(team.path("usd").asDouble()).isPositive();
      assertThat(team.at("/sinceStart/requests").asLong()).isEqualTo(2);
      assertThat(team.at("/sinceStart/inputTokens").asLong()).isEqualTo(20_000);
      assertThat(team.at("/sinceStart/outputTokens").asLong()).isEqualTo(2_000);
    }
  }

  @Test
  void aConfiguredPriceReplacesTheShippedOne() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS
        + "spend: {prices: {gpt-4o: {input: 1.0, output: 2.0}}}")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));

      h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "Review this diff", false));

      // cachedInput unset: cached prompt tokens at the input price
      assertThat(lastAccessLine(1).get("costUsd").asDouble()).isCloseTo((10_000 * 1.0 + 1_000 * 2.0) / 1_000_000,
          within(1e-12));
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("callers")
  void aTeamPastItsMoneyBudgetGets429InsufficientQuotaUntilTheMonthEndsWhileOtherTeamsPass(Caller caller)
      throws IOException {
    // Two requests (0.06 USD) pass a 0.05 budget: the third is refused.
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS + "spend: {teams: {" + caller.team()
        + ": {monthlyUsd: 0.05}}}")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));
      String other = caller.key().equals(GOLD_KEY) ? SILVER_KEY : GOLD_KEY;

      HttpResponse<String> first = h.post("/v1/chat/completions", caller.key(), chatBody("gpt-4o", "one", false));
      JsonNode afterFirst = spend(h).at("/teams/" + caller.team());
      HttpResponse<String> second = h.post("/v1/chat/completions", caller.key(), chatBody("gpt-4o", "two", false));
      HttpResponse<String> refused = h.post("/v1/chat/completions", caller.key(), chatBody("gpt-4o", "three", false));
      HttpResponse<String> otherTeam = h.post("/v1/chat/completions", other, chatBody("gpt-4o", "four", false));

      assertThat(first.statusCode()).isEqualTo(200);
      assertThat(afterFirst.get("band").asText()).isEqualTo("ok");
      assertThat(second.statusCode()).isEqualTo(200);
      assertThat(refused.statusCode()).isEqualTo(429);
      JsonNode error = Json.parse(refused.body()).get("error");
      assertThat(error.get("code").asText()).isEqualTo("insufficient_quota");
      assertThat(error.get("type").asText()).isEqualTo("insufficient_quota");
      assertThat(error.get("message").asText()).contains(caller.team(), "money budget", "2026-12-01T00:00:00Z");
      assertThat(refused.headers().firstValue("retry-after")).contains(Long.toString(SECONDS_TO_DECEMBER));
      assertThat(otherTeam.statusCode()).isEqualTo(200);
      JsonNode team = spend(h).at("/teams/" + caller.team());
      assertThat(team.get("usd").asDouble()).isCloseTo(2 * GPT_4O_COST, within(1e-12));
      assertThat(team.get("monthlyUsd").asDouble()).isEqualTo(0.05);
      assertThat(team.get("band").asText()).isEqualTo("hard");
      assertThat(logs.lines()).anyMatch(l -> l.contains("Team '" + caller.team() + "' reached the hard band"));
      assertThat(metric(h, "spillway_spend_alerts_total", "band", "hard")).isEqualTo(1.0);
      assertThat(metric(h, "spillway_spend_refused_total", "tier", caller.tier())).isEqualTo(1.0);
    }
  }

  @Test
  void theAlertAndSoftBandsOfAMoneyBudgetAreAnnouncedOnceEach() {
    // 0.03 of 0.036 is 83 %: alert; 0.06 is past 100 %: soft and hard.
    try (GatewayHarness h = GatewayHarness.start(BIG_POOLS + "spend: {teams: {web: {monthlyUsd: 0.036}}}")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(cachedGpt4oAnswer(false)));

      h.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "one", false));
      List<String> afterFirst = logs.lines().stream().filter(l -> l.contains("Team 'web' reached")).toList();
      h.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "two", false));

      assertThat(afterFirst).hasSize(1).allMatch(l -> l.contains("alert band"));
      assertThat(logs.lines().stream().filter(l -> l.contains("Team 'web' reached")))
          .hasSize(3).anyMatch(l -> l.contains("soft band")).anyMatch(l -> l.contains("hard band"));
      assertThat(metric(h, "spillway_spend_alerts_total", "band", "alert")).isEqualTo(1.0);
    }
  }
}
