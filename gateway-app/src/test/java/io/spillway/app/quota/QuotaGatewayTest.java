package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.BRONZE_KEY;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.core.http.StreamResponse;
import com.openai.errors.RateLimitException;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tier pools through the real gateway, with the OpenAI SDK and raw HTTP as clients. */
class QuotaGatewayTest {
  /** 10 000 tokens: gold 2 000 (+10 % overdraft), silver 5 000, bronze 3 000. */
  private static final String SMALL_BUDGET = "quota: {monthlyTokens: 10000}";
  private static final long SECONDS_TO_DECEMBER =
      Duration.between(Instant.parse("2026-11-10T10:00:00Z"), Instant.parse("2026-12-01T00:00:00Z")).toSeconds();

  private static ChatCompletionCreateParams hello() {
    return ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O).addUserMessage("Say hello").maxTokens(50).build();
  }

  private static JsonNode quotaReport(GatewayHarness harness) throws IOException {
    HttpResponse<String> report = harness.get("/admin/quota", ADMIN_TOKEN);
    assertThat(report.statusCode()).isEqualTo(200);
    return Json.parse(report.body());
  }

  @Test
  void anExhaustedBronzePoolGets429InsufficientQuotaWithRetryAfterWhileGoldPasses() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(SMALL_BUDGET)) {
      h.cloud.stubFor(post("/v1/chat/completions")
          .willReturn(OpenAiStubs.json(200, OpenAiStubs.chatCompletionBody("done", 2_990, 10))));
      h.openAi(BRONZE_KEY).chat().completions().create(hello()); // a runaway script burns the pool: 3 000 of 3 000

      RateLimitException refused = catchThrowableOfType(RateLimitException.class,
          () -> h.openAi(BRONZE_KEY).chat().completions().create(hello()));
      HttpResponse<String> raw = h.post("/v1/chat/completions", BRONZE_KEY, chatBody("gpt-4o", "again", false));
      ChatCompletion gold = h.openAi(GOLD_KEY).chat().completions().create(hello());

      assertThat(refused.statusCode()).isEqualTo(429);
      assertThat(refused.code()).contains("insufficient_quota");
      assertThat(refused.type()).contains("insufficient_quota");
      assertThat(raw.statusCode()).isEqualTo(429);
      assertThat(raw.headers().firstValue("retry-after")).contains(Long.toString(SECONDS_TO_DECEMBER));
      assertThat(raw.headers().firstValue("x-ratelimit-limit-tokens")).contains("3000");
      assertThat(raw.headers().firstValue("x-ratelimit-remaining-tokens")).contains("0");
      assertThat(raw.headers().firstValue("x-ratelimit-reset-tokens")).contains("494h0m0s");
      assertThat(Json.parse(raw.body()).at("/error/message").asText()).contains("bronze", "2026-12-01T00:00:00Z");
      assertThat(gold.choices().getFirst().message().content()).contains("done");
      h.cloud.verify(2, postRequestedFor(urlEqualTo("/v1/chat/completions")));
    }
  }

  @Test
  void everyAnswerCarriesTheCallersPoolInTokenHeaders() {
    try (GatewayHarness h = GatewayHarness.start(SMALL_BUDGET)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));

      HttpResponse<String> silver = h.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false));
      HttpResponse<String> gold = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));

      assertThat(silver.headers().firstValue("x-ratelimit-limit-tokens")).contains("5000");
      assertThat(silver.headers().firstValue("x-ratelimit-remaining-tokens")).contains(Long.toString(5000 - 19));
      assertThat(gold.headers().firstValue("x-ratelimit-limit-tokens")).contains("2200");
      assertThat(gold.headers().firstValue("x-ratelimit-reset-tokens")).contains("494h0m0s");
    }
  }

  @Test
  void aRequestRefusedByItsRateLimitStillSeesItsTokenPoolAndCostsNoTokens() throws IOException {
    try (GatewayHarness h = GatewayHarness.start("quota: {monthlyTokens: 10000, tiers: {bronze: {requestsPerHour: 1}}}")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
      h.post("/v1/chat/completions", BRONZE_KEY, chatBody("gpt-4o", "hi", false));

      HttpResponse<String> limited = h.post("/v1/chat/completions", BRONZE_KEY, chatBody("gpt-4o", "hi", false));

      assertThat(limited.statusCode()).isEqualTo(429);
      assertThat(Json.parse(limited.body()).at("/error/code").asText()).isEqualTo("rate_limit_exceeded");
      assertThat(limited.headers().firstValue("x-ratelimit-limit-requests")).contains("1");
      assertThat(limited.headers().firstValue("x-ratelimit-limit-tokens")).contains("3000");
      assertThat(limited.headers().firstValue("x-ratelimit-remaining-tokens")).contains(Long.toString(3000 - 19));
      assertThat(quotaReport(h).at("/pools/bronze/used").asLong()).isEqualTo(19);
    }
  }

  @Test
  void aStreamIsSettledWithItsUsageAndTheUsageChunkTheClientDidNotAskForIsStripped() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(SMALL_BUDGET)) {
      h.cloud.stubFor(post("/v1/chat/completions")
          .withRequestBody(matchingJsonPath("$.stream_options.include_usage", equalTo("true")))
          .willReturn(OpenAiStubs.chatStream(true, "Hel", "lo", " world")));

      List<ChatCompletionChunk> chunks;
      try (StreamResponse<ChatCompletionChunk> stream =
          h.openAi(SILVER_KEY).chat().completions().createStreaming(hello())) {
        chunks = stream.stream().toList();
      }

      String text = chunks.stream().flatMap(c -> c.choices().stream())
          .map(choice -> choice.delta().content().orElse("")).collect(Collectors.joining());
      assertThat(text).isEqualTo("Hello world");
      assertThat(chunks).allSatisfy(chunk -> assertThat(chunk.choices()).isNotEmpty());
      assertThat(chunks).noneMatch(chunk -> chunk.usage().isPresent());
      JsonNode report = quotaReport(h);
      assertThat(report.at("/pools/silver/used").asLong()).isEqualTo(12 + 3);
      assertThat(report.at("/pools/silver/reserved").asLong()).isZero();
      assertThat(report.at("/teams/web/used").asLong()).isEqualTo(15);
    }
  }

  @Test
  void aCachedStreamCostsNoTokensAndReplaysWithoutTheUsageChunkButWithTokenHeaders() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(SMALL_BUDGET)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "Hel", "lo")));
      String deterministic = "{\"model\":\"gpt-4o\",\"stream\":true,\"temperature\":0,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

      HttpResponse<String> first = h.post("/v1/chat/completions", SILVER_KEY, deterministic);
      await().until(() -> h.gateway().cache().stats().entries() == 1);
      HttpResponse<String> second = h.post("/v1/chat/completions", SILVER_KEY, deterministic);

      assertThat(second.headers().firstValue("x-spillway-cache")).contains("hit");
      assertThat(second.body()).isEqualTo(first.body()).contains("Hel").doesNotContain("prompt_tokens");
      assertThat(second.headers().firstValue("x-ratelimit-remaining-tokens")).contains(Long.toString(5000 - 14));
      assertThat(quotaReport(h).at("/pools/silver/used").asLong()).isEqualTo(12 + 2);
    }
  }

  @Test
  void aClientThatAskedForStreamUsageStillGetsIt() {
    try (GatewayHarness h = GatewayHarness.start(SMALL_BUDGET)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "Hi")));

      List<ChatCompletionChunk> chunks;
      try (StreamResponse<ChatCompletionChunk> stream = h.openAi(GOLD_KEY).chat().completions().createStreaming(
          hello().toBuilder().streamOptions(ChatCompletionStreamOptions.builder()
              .includeUsage(true).build()).build())) {
        chunks = stream.stream().toList();
      }

      assertThat(chunks.getLast().usage().orElseThrow().totalTokens()).isEqualTo(13);
    }
  }

  @Test
  void adminQuotaShowsEveryPoolAndTeam() throws IOException {
    try (GatewayHarness h = GatewayHarness.start(SMALL_BUDGET)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
      h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
      h.post("/v1/chat/completions", BRONZE_KEY, chatBody("gpt-4o", "hi", false));

      JsonNode report = quotaReport(h);

      assertThat(report.get("month").asText()).isEqualTo("2026-11");
      assertThat(report.get("resetAt").asText()).isEqualTo("2026-12-01T00:00:00Z");
      assertThat(report.at("/pools/gold/limit").asLong()).isEqualTo(2000);
      assertThat(report.at("/pools/gold/ceiling").asLong()).isEqualTo(2200);
      assertThat(report.at("/pools/gold/used").asLong()).isEqualTo(19);
      assertThat(report.at("/pools/bronze/used").asLong()).isEqualTo(19);
      assertThat(report.at("/pools/silver/band").asText()).isEqualTo("ok");
      assertThat(report.at("/teams/release/used").asLong()).isEqualTo(19);
      assertThat(report.at("/teams/sandbox/used").asLong()).isEqualTo(19);
      assertThat(h.get("/admin/quota", "wrong-token").statusCode()).isEqualTo(401);
    }
  }

  @Test
  void poolsAppearInPrometheusUnderTheirDocumentedNames() {
    try (GatewayHarness h = GatewayHarness.start(SMALL_BUDGET)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.json(200,
          OpenAiStubs.chatCompletionBody("hi", 2_390, 10))));
      h.post("/v1/chat/completions", BRONZE_KEY, chatBody("gpt-4o", "hi", false));

      String scrape = ((PrometheusMeterRegistry) h.gateway().meters()).scrape();

      assertThat(scrape)
          .contains("spillway_quota_pool_usage_ratio{tier=\"bronze\"} 0.8")
          .contains("spillway_quota_band{tier=\"bronze\"} 1.0")
          .contains("spillway_quota_tokens_total{direction=\"input\",tier=\"bronze\"} 2390.0")
          .contains("spillway_quota_alerts_total{band=\"alert\",tier=\"bronze\"} 1.0")
          .contains("spillway_quota_store_healthy 1.0")
          .contains("spillway_quota_refused_total{tier=\"gold\"} 0.0");
    }
  }

  @Test
  void aRestartKeepsTheMonthsUsage(@TempDir Path data) throws IOException {
    String durable = SMALL_BUDGET + "\nstore: embedded:" + data;
    try (GatewayHarness first = GatewayHarness.start(durable)) {
      first.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
      first.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false));
      first.post("/v1/chat/completions", SILVER_KEY, chatBody("gpt-4o", "hi", false));
    }

    try (GatewayHarness second = GatewayHarness.start(durable)) {
      JsonNode report = quotaReport(second);
      assertThat(report.at("/pools/silver/used").asLong()).isEqualTo(38);
      assertThat(report.at("/teams/web/used").asLong()).isEqualTo(38);
      assertThat(report.at("/store/kind").asText()).isEqualTo("embedded");
    }
  }
}
