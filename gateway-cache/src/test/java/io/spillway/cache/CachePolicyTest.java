package io.spillway.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.CacheConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CachePolicyTest {
  static final Caller RELEASE = new Caller("release", Tier.GOLD, "k1");
  static final Caller WEB = new Caller("web", Tier.GOLD, "k2");
  static final CachePolicy DEFAULT = new CachePolicy(CacheConfig.DEFAULTS);

  static GatewayRequest request(Route route, String json, String... headers) {
    try {
      byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
      return GatewayRequest.create("req-1", route, Headers.of(headers), (ObjectNode) Json.parse(bytes), bytes,
          Instant.EPOCH);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static GatewayRequest chat(String json, String... headers) {
    return request(Route.CHAT_COMPLETIONS, json, headers);
  }

  static CacheKey key(CachePolicy policy, GatewayRequest request, Caller caller) {
    CachePolicy.Decision decision = policy.decide(request, caller);
    assertThat(decision.mode()).as("decision for %s", request).isNotEqualTo(CachePolicy.Mode.BYPASS);
    return decision.key();
  }

  @Test
  void aMessagesRequestIsKeyedApartFromTheSameChatRequestAndByItsAnthropicHeaders() {
    String body = """
        {"model":"claude-sonnet-4-5","max_tokens":64,"temperature":0,"messages":[{"role":"user","content":"hi"}]}""";
    CacheKey messages = key(DEFAULT, request(Route.MESSAGES, body, "anthropic-version", "2023-06-01"), RELEASE);
    CacheKey again = key(DEFAULT, request(Route.MESSAGES, body, "anthropic-version", "2023-06-01"), RELEASE);
    CacheKey chat = key(DEFAULT, chat(body, "anthropic-version", "2023-06-01"), RELEASE);
    CacheKey beta = key(DEFAULT, request(Route.MESSAGES, body, "anthropic-version", "2023-06-01",
        "anthropic-beta", "claude-code-20250219"), RELEASE);
    CacheKey version = key(DEFAULT, request(Route.MESSAGES, body, "anthropic-version", "2024-01-01"), RELEASE);

    assertThat(again).isEqualTo(messages);
    assertThat(List.of(messages, chat, beta, version)).doesNotHaveDuplicates();
  }

  @Test
  void aMessagesCountTokensRequestIsNeverCached() {
    assertThat(DEFAULT.decide(request(Route.MESSAGES_COUNT_TOKENS, """
        {"model":"claude-sonnet-4-5","temperature":0,"messages":[{"role":"user","content":"hi"}]}"""), RELEASE)
        .mode()).isEqualTo(CachePolicy.Mode.BYPASS);
  }

  @Test
  void reorderedFieldsAndWhitespaceGiveTheSameKey() {
    CacheKey a = key(DEFAULT, chat("""
        {"model":"gpt-4o","temperature":0,"messages":[{"role":"user","content":"lint this"}]}"""), RELEASE);
    CacheKey b = key(DEFAULT, chat("""
        {
          "messages" : [ { "content" : "lint this", "role" : "user" } ],
          "temperature" : 0.0,
          "model" : "gpt-4o"
        }"""), RELEASE);

    assertThat(b).isEqualTo(a);
  }

  @Test
  void aChangedFieldGivesAnotherKey() {
    CacheKey a = key(DEFAULT, chat("""
        {"model":"gpt-4o","temperature":0,"messages":[{"role":"user","content":"lint this"}]}"""), RELEASE);
    CacheKey otherContent = key(DEFAULT, chat("""
        {"model":"gpt-4o","temperature":0,"messages":[{"role":"user","content":"lint that"}]}"""), RELEASE);
    CacheKey otherModel = key(DEFAULT, chat("""
        {"model":"gpt-4o-mini","temperature":0,"messages":[{"role":"user","content":"lint this"}]}"""), RELEASE);
    CacheKey extraField = key(DEFAULT, chat("""
        {"model":"gpt-4o","temperature":0,"max_tokens":5,"messages":[{"role":"user","content":"lint this"}]}"""),
        RELEASE);
    CacheKey streamed = key(DEFAULT, chat("""
        {"model":"gpt-4o","temperature":0,"stream":true,"messages":[{"role":"user","content":"lint this"}]}"""),
        RELEASE);

    assertThat(List.of(otherContent, otherModel, extraField, streamed)).doesNotContain(a).doesNotHaveDuplicates();
  }

  @Test
  void anotherTeamGetsAnotherKey() {
    String body = """
        {"model":"gpt-4o","temperature":0,"messages":[{"role":"user","content":"lint this"}]}""";

    assertThat(key(DEFAULT, chat(body), WEB)).isNotEqualTo(key(DEFAULT, chat(body), RELEASE));
  }

  @Test
  void tierScopeSharesWithinATierAndGlobalScopeSharesWithEveryone() {
    String body = """
        {"model":"gpt-4o","temperature":0,"messages":[{"role":"user","content":"lint this"}]}""";
    Caller silverWeb = new Caller("web", Tier.SILVER, "k3");
    CachePolicy tier = new CachePolicy(new CacheConfig(null, null, null, null, CacheConfig.Scope.TIER, null, null));
    CachePolicy global = new CachePolicy(new CacheConfig(null, null, null, null, CacheConfig.Scope.GLOBAL, null, null));

    assertThat(key(tier, chat(body), WEB)).isEqualTo(key(tier, chat(body), RELEASE));
    assertThat(key(tier, chat(body), silverWeb)).isNotEqualTo(key(tier, chat(body), RELEASE));
    assertThat(key(global, chat(body), silverWeb)).isEqualTo(key(global, chat(body), RELEASE));
  }

  @Test
  void theSameBodyOnAnotherRouteGetsAnotherKey() {
    String body = """
        {"model":"gpt-4o","temperature":0,"input":"2+2?"}""";

    assertThat(key(DEFAULT, request(Route.RESPONSES, body), RELEASE))
        .isNotEqualTo(key(DEFAULT, request(Route.COMPLETIONS, body), RELEASE));
  }

  @Test
  void theOpenAiBetaHeaderIsPartOfTheKeyButOtherHeadersAreNot() {
    String body = """
        {"model":"gpt-4o","temperature":0,"messages":[]}""";
    CacheKey plain = key(DEFAULT, chat(body), RELEASE);

    assertThat(key(DEFAULT, chat(body, "OpenAI-Beta", "assistants=v2"), RELEASE)).isNotEqualTo(plain);
    assertThat(key(DEFAULT, chat(body, "x-stainless-retry-count", "1"), RELEASE)).isEqualTo(plain);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      temperature 0 is cached                 | {"model":"m","temperature":0,"messages":[]}                         | LOOKUP  |
      temperature 0.0 is cached               | {"model":"m","temperature":0.0,"messages":[]}                       | LOOKUP  |
      a fixed seed is cached                  | {"model":"m","temperature":0.7,"seed":42,"messages":[]}             | LOOKUP  |
      default temperature is sampled          | {"model":"m","messages":[]}                                         | BYPASS  | sampling
      temperature 0.2 is sampled              | {"model":"m","temperature":0.2,"messages":[]}                       | BYPASS  | sampling
      n 1 is cached                           | {"model":"m","temperature":0,"n":1,"messages":[]}                   | LOOKUP  |
      n 3 is not                              | {"model":"m","temperature":0,"n":3,"messages":[]}                   | BYPASS  | n
      function tools are cached               | {"model":"m","temperature":0,"messages":[],"tools":[{"type":"function","function":{"name":"lint"}}]} | LOOKUP |
      web search is not                       | {"model":"m","temperature":0,"messages":[],"tools":[{"type":"web_search_preview"}]} | BYPASS | tools
      """)
  void chatRequestsAreCachedOnlyWhenDeterministic(String rule, String body, CachePolicy.Mode mode, String reason) {
    CachePolicy.Decision decision = DEFAULT.decide(chat(body), RELEASE);

    assertThat(decision.mode()).as(rule).isEqualTo(mode);
    assertThat(decision.reason()).as(rule).isEqualTo(reason);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', textBlock = """
      plain request                 | {"model":"m","temperature":0,"input":"x"}                          | LOOKUP | 
      background run                | {"model":"m","temperature":0,"input":"x","background":true}        | BYPASS | stateful
      conversation                  | {"model":"m","temperature":0,"input":"x","conversation":"conv_1"}  | BYPASS | stateful
      previous response is fine     | {"model":"m","temperature":0,"input":"x","previous_response_id":"resp_1"} | LOOKUP |
      mcp tool                      | {"model":"m","temperature":0,"input":"x","tools":[{"type":"mcp","server_label":"s"}]} | BYPASS | tools
      """)
  void responsesRequestsWithServerSideStateAreNotCached(
      String rule, String body, CachePolicy.Mode mode, String reason) {
    CachePolicy.Decision decision = DEFAULT.decide(request(Route.RESPONSES, body), RELEASE);

    assertThat(decision.mode()).as(rule).isEqualTo(mode);
    assertThat(decision.reason()).as(rule).isEqualTo(reason);
  }

  @Test
  void configuredFunctionNamesAndTypesAreUncacheable() {
    CachePolicy policy = new CachePolicy(new CacheConfig(null, null, null, null, null, null, List.of("send_email")));
    String sends = """
        {"model":"m","temperature":0,"messages":[],"tools":[{"type":"function","function":{"name":"send_email"}}]}""";
    String searches = """
        {"model":"m","temperature":0,"messages":[],"tools":[{"type":"web_search_preview"}]}""";

    assertThat(policy.decide(chat(sends), RELEASE).reason()).isEqualTo("tools");
    assertThat(policy.decide(chat(searches), RELEASE).mode())
        .as("the configured list replaces the default one").isEqualTo(CachePolicy.Mode.LOOKUP);
  }

  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(delimiter = '|', textBlock = """
      Cache-Control | no-store                 | BYPASS
      Cache-Control | No-Store, max-age=60     | BYPASS
      Cache-Control | no-cache                 | REFRESH
      Cache-Control | max-age=0                | REFRESH
      Cache-Control | no-cache, no-store       | BYPASS
      Cache-Control | max-age=600              | LOOKUP
      Pragma        | no-cache                 | REFRESH
      """)
  void cacheControlIsHonoured(String header, String value, CachePolicy.Mode mode) {
    String body = """
        {"model":"m","temperature":0,"messages":[]}""";

    assertThat(DEFAULT.decide(chat(body, header, value), RELEASE).mode()).isEqualTo(mode);
  }

  @Test
  void tiersCanOptOutAndModelsAndDisabledCacheBypass() {
    String body = """
        {"model":"m","temperature":0,"messages":[]}""";
    CachePolicy noBronze = new CachePolicy(new CacheConfig(null, null, null, null, null,
        Map.of(Tier.BRONZE, false), null));
    CachePolicy off = new CachePolicy(new CacheConfig(false, null, null, null, null, null, null));

    assertThat(noBronze.decide(chat(body), new Caller("sandbox", Tier.BRONZE, "k")).reason()).isEqualTo("tier");
    assertThat(noBronze.decide(chat(body), new Caller("web", Tier.SILVER, "k")).mode())
        .isEqualTo(CachePolicy.Mode.LOOKUP);
    assertThat(off.decide(chat(body), RELEASE).reason()).isEqualTo("disabled");
    assertThat(DEFAULT.decide(request(Route.MODELS, "{}"), RELEASE).reason()).isEqualTo("route");
  }

  @Test
  void canonicalTextSortsMembersAndSpellsNumbersOneWay() throws IOException {
    assertThat(CanonicalJson.text(Json.parse("""
        {"b": [1.50, 100, 1e2, -0.0], "a": {"z": null, "y": "é\\n"}}""")))
        .isEqualTo("{\"a\":{\"y\":\"é\\n\",\"z\":null},\"b\":[1.5,1E+2,1E+2,0]}");
    assertThat(CanonicalJson.text(Json.parse("[1e999999999]"))).isEqualTo("[1E+999999999]");
  }
}
