package io.spillway.app.quota;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.redis.testing.RedisServer;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A hostile upstream behind the real gateway (issue 25, finding 3): it reports 4e18 tokens,
 * Long.MAX_VALUE, or a count as a string, buffered and streamed. For every tier and both stores
 * (the embedded file, and Redis), each report is refused and counted, the request settled at its
 * estimate, and the tier's pool stays open for the next request instead of answering 429
 * {@code insufficient_quota} for the rest of the month.
 */
class HostileUsageGatewayTest {
  static final List<String> HOSTILE_USAGE = List.of(
      "{\"prompt_tokens\":4e18,\"completion_tokens\":4e18,\"total_tokens\":8e18}",
      "{\"prompt_tokens\":9223372036854775807,\"completion_tokens\":0,\"total_tokens\":9223372036854775807}",
      "{\"prompt_tokens\":12,\"completion_tokens\":\"99999999\",\"total_tokens\":\"100000011\"}");

  @TempDir Path dir;

  static Stream<Arguments> tiersAndStores() {
    return Stream.of("gold", "silver", "bronze")
        .flatMap(tier -> Stream.of(Arguments.of(tier, "embedded"), Arguments.of(tier, "redis")));
  }

  static String key(String tier) {
    return switch (tier) {
      case "gold" -> GatewayHarness.GOLD_KEY;
      case "silver" -> GatewayHarness.SILVER_KEY;
      default -> GatewayHarness.BRONZE_KEY;
    };
  }

  static String bufferedWith(String usage) {
    return OpenAiStubs.chatCompletionBody("ok", 12, 7)
        .replaceFirst("\"usage\":\\{[^}]*}", "\"usage\":" + java.util.regex.Matcher.quoteReplacement(usage));
  }

  static String streamedWith(String usage) {
    return OpenAiStubs.chatStreamBody(true, "ok")
        .replaceFirst("\"usage\":\\{[^}]*}", "\"usage\":" + java.util.regex.Matcher.quoteReplacement(usage));
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("tiersAndStores")
  void absurdUsageFromAnUpstreamNeverEmptiesAPool(String tier, String store) throws IOException {
    try (RedisServer redis = store.equals("redis") ? RedisServer.start() : null;
        GatewayHarness gateway = GatewayHarness.start("""
            quota: {monthlyTokens: 1000000, flushInterval: 100ms}
            shaping: {degrade: never}
            store: %s
            """.formatted(redis != null ? redis.uri() : "embedded:" + dir))) {
      for (String usage : HOSTILE_USAGE) {
        for (boolean streamed : new boolean[] {false, true}) {
          gateway.cloud.stubFor(post("/v1/chat/completions").willReturn(streamed
              ? aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(streamedWith(usage))
              : OpenAiStubs.json(200, bufferedWith(usage))));

          HttpResponse<String> hostile = gateway.post("/v1/chat/completions", key(tier), chatBody("gpt-4o", "hi", streamed));
          assertThat(hostile.statusCode()).isEqualTo(200);
          hostile.body();

          gateway.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("fine")));
          HttpResponse<String> next = gateway.post("/v1/chat/completions", key(tier), chatBody("gpt-4o", "hi", false));
          assertThat(next.statusCode()).as("%s after %s (streamed %s)", tier, usage, streamed).isEqualTo(200);
        }
      }

      JsonNode pool = Json.parse(gateway.get("/admin/quota", ADMIN_TOKEN).body()).at("/pools/" + tier);
      assertThat(pool.get("used").asLong()).as("six estimates and six honest answers, nothing absurd")
          .isPositive().isLessThan(20_000);
      String metrics = gateway.get("/metrics", null).body();
      assertThat(metrics).contains("spillway_quota_usage_refused_total{reason=\"fractional\"} 2.0")
          .contains("spillway_quota_usage_refused_total{reason=\"too_large\"} 2.0")
          .contains("spillway_quota_usage_refused_total{reason=\"string\"} 2.0");
    }
  }
}
