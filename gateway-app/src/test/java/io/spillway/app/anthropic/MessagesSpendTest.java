package io.spillway.app.anthropic;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a Messages call on the Anthropic route costs, from the shipped Claude prices: Anthropic's
 * usage splits the prompt into uncached input, cache reads ({@code cache_read_input_tokens}) and
 * cache writes ({@code cache_creation_input_tokens}), each at its own rate, buffered and streamed,
 * for every tier, with the model named by its dated snapshot.
 */
class MessagesSpendTest {
  /** claude-sonnet-4-5: 20 input at 3.00, 300 cache reads at 0.30, 100 cache writes at 3.75, 7 output at 15.00. */
  private static final double COST = (20 * 3.00 + 300 * 0.30 + 100 * 3.75 + 7 * 15.00) / 1_000_000;

  @RegisterExtension
  final ClaudeRouteGateway gw = ClaudeRouteGateway.claudeOnly();

  static Stream<Arguments> tiersAndModes() {
    List<Arguments> all = new ArrayList<>();
    all.add(Arguments.of(GatewayHarness.GOLD_KEY, "release", false));
    all.add(Arguments.of(GatewayHarness.GOLD_KEY, "release", true));
    all.add(Arguments.of(GatewayHarness.SILVER_KEY, "web", false));
    all.add(Arguments.of(GatewayHarness.SILVER_KEY, "web", true));
    all.add(Arguments.of(GatewayHarness.BRONZE_KEY, "sandbox", false));
    all.add(Arguments.of(GatewayHarness.BRONZE_KEY, "sandbox", true));
    return all.stream();
  }

  @ParameterizedTest(name = "{1}, stream {2}")
  @MethodSource("tiersAndModes")
  void aClaudeCallCostsItsInputCacheReadsCacheWritesAndOutputEachAtItsPrice(String key, String team, boolean stream) {
    String model = "claude-sonnet-4-5-20250929";
    gw.anthropic.stubFor(post("/v1/messages").willReturn(stream
        ? AnthropicStubs.messageStream(model, "Priced.") : AnthropicStubs.message(model, "Priced.")));

    HttpResponse<String> answer = gw.messages(key, """
        {"model":"%s","max_tokens":64,"stream":%s,"messages":[{"role":"user","content":"Hi"}]}"""
        .formatted(model, stream));

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    JsonNode spend = org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(5))
        .until(() -> AnthropicStubs.parse(gw.h.get("/admin/quota", GatewayHarness.ADMIN_TOKEN).body()).get("spend"),
            s -> s.at("/teams/" + team + "/usd").asDouble() > 0);
    assertThat(spend.at("/teams/" + team + "/usd").asDouble()).isCloseTo(COST, within(1e-12));
    assertThat(spend.at("/unpricedModels").toString()).doesNotContain("claude");
  }
}
