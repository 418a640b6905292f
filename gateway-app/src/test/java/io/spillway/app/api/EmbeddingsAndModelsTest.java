package io.spillway.app.api;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.errors.NotFoundException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.embeddings.CreateEmbeddingResponse;
import com.openai.models.embeddings.EmbeddingCreateParams;
import com.openai.models.models.Model;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Tier;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code POST /v1/embeddings} and {@code GET /v1/models/{id}} through the real gateway with the
 * OpenAI Java SDK, against a WireMock cloud and a WireMock Ollama (or OpenAI-kind local server),
 * with the breaker closed and open.
 */
class EmbeddingsAndModelsTest {
  /** The embedding model has its own local mapping; text-embedding-3-large has none. */
  private static final String MAPPED = """
      local:
        kind: %s
        models:
          text-embedding-3-small: nomic-embed-text
      quota:
        tiers:
          silver: {requestsPerMinutePerTeam: 2}
      """;

  private static final String CLOUD_EMBEDDING = """
      {"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.5,-0.25]}],
       "model":"text-embedding-3-small","usage":{"prompt_tokens":8,"total_tokens":8}}
      """;

  private static final String OLLAMA_EMBEDDING = """
      {"model":"nomic-embed-text","embeddings":[[0.125,0.25,-0.5]],"total_duration":1400,"load_duration":10,
       "prompt_eval_count":3}
      """;

  private static GatewayHarness start(String kind) {
    GatewayHarness h = GatewayHarness.start(MAPPED.formatted(kind));
    h.cloud.stubFor(post("/v1/embeddings").willReturn(OpenAiStubs.json(200, CLOUD_EMBEDDING)));
    h.ollama.stubFor(post("/api/embed").willReturn(OpenAiStubs.json(200, OLLAMA_EMBEDDING)));
    h.ollama.stubFor(post("/v1/embeddings").willReturn(OpenAiStubs.json(200, """
        {"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.125,0.25,-0.5]}],
         "model":"nomic-embed-text","usage":{"prompt_tokens":3,"total_tokens":3}}
        """)));
    return h;
  }

  private static EmbeddingCreateParams params(String model) {
    return EmbeddingCreateParams.builder().model(model).input("def add(a, b): return a + b").build();
  }

  private static HttpResponse<String> setBreaker(GatewayHarness h, String state) {
    return h.post("/admin/breaker", ADMIN_TOKEN, "{\"state\":\"" + state + "\"}");
  }

  private static JsonNode json(String body) {
    try {
      return Json.parse(body);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  @ParameterizedTest
  @EnumSource(Tier.class)
  void embeddingsPassThroughToTheCloudAndCountTheirPromptTokensInTheTeamsPool(Tier tier) {
    String key = switch (tier) {
      case GOLD -> GatewayHarness.GOLD_KEY;
      case SILVER -> GatewayHarness.SILVER_KEY;
      case BRONZE -> GatewayHarness.BRONZE_KEY;
    };
    try (GatewayHarness h = start("ollama")) {
      try (HttpResponseFor<CreateEmbeddingResponse> raw =
          h.openAi(key).embeddings().withRawResponse().create(params("text-embedding-3-small"))) {
        CreateEmbeddingResponse answer = raw.parse();
        assertThat(raw.headers().values("x-spillway-backend")).containsExactly("cloud");
        assertThat(answer.model()).isEqualTo("text-embedding-3-small");
        assertThat(answer.data().get(0).embedding()).containsExactly(0.5f, -0.25f);
        assertThat(answer.usage().promptTokens()).isEqualTo(8);
      }
      h.cloud.verify(postRequestedFor(urlEqualTo("/v1/embeddings"))
          .withHeader("Authorization", equalTo("Bearer " + GatewayHarness.CLOUD_KEY))
          .withRequestBody(matchingJsonPath("$.input", equalTo("def add(a, b): return a + b"))));
      JsonNode quota = json(h.get("/admin/quota", ADMIN_TOKEN).body());
      assertThat(quota.at("/pools/" + tier.name().toLowerCase(Locale.ROOT) + "/used").asLong()).isEqualTo(8);
    }
  }

  @Test
  void embeddingsAreRateLimitedLikeEveryOtherCall() {
    try (GatewayHarness h = start("ollama")) {
      String body = "{\"model\":\"text-embedding-3-small\",\"input\":\"hi\"}";
      assertThat(h.post("/v1/embeddings", GatewayHarness.SILVER_KEY, body).statusCode()).isEqualTo(200);
      assertThat(h.post("/v1/embeddings", GatewayHarness.SILVER_KEY, body).statusCode()).isEqualTo(200);

      HttpResponse<String> limited = h.post("/v1/embeddings", GatewayHarness.SILVER_KEY, body);

      assertThat(limited.statusCode()).isEqualTo(429);
      assertThat(json(limited.body()).at("/error/code").asText()).isEqualTo("rate_limit_exceeded");
      assertThat(limited.headers().firstValue("retry-after")).isPresent();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"ollama", "openai"})
  void withTheBreakerOpenAMappedModelIsEmbeddedLocallyAndTheAnswerNamesTheLocalModel(String kind) {
    try (GatewayHarness h = start(kind)) {
      setBreaker(h, "open");

      try (HttpResponseFor<CreateEmbeddingResponse> raw =
          h.openAi(GatewayHarness.GOLD_KEY).embeddings().withRawResponse().create(params("text-embedding-3-small"))) {
        CreateEmbeddingResponse answer = raw.parse();
        assertThat(raw.headers().values("x-spillway-backend")).containsExactly("local");
        assertThat(answer.model()).isEqualTo("nomic-embed-text");
        assertThat(answer.data().get(0).embedding()).containsExactly(0.125f, 0.25f, -0.5f);
        assertThat(answer.usage().promptTokens()).isEqualTo(3);
      }
      h.cloud.verify(0, postRequestedFor(urlEqualTo("/v1/embeddings")));
      if (kind.equals("ollama")) {
        h.ollama.verify(postRequestedFor(urlEqualTo("/api/embed")).withRequestBody(
            equalToJson("{\"model\":\"nomic-embed-text\",\"input\":\"def add(a, b): return a + b\"}", true, true)));
      } else {
        h.ollama.verify(postRequestedFor(urlEqualTo("/v1/embeddings"))
            .withRequestBody(matchingJsonPath("$.model", equalTo("nomic-embed-text"))));
      }
    }
  }

  @Test
  void ollamasVectorsComeBackAsFloatsWhenTheClientAsksForFloats() {
    try (GatewayHarness h = start("ollama")) {
      setBreaker(h, "open");

      HttpResponse<String> response = h.post("/v1/embeddings", GatewayHarness.GOLD_KEY,
          "{\"model\":\"text-embedding-3-small\",\"input\":[\"a\"],\"encoding_format\":\"float\"}");

      assertThat(response.statusCode()).isEqualTo(200);
      JsonNode answer = json(response.body());
      assertThat(answer.get("object").asText()).isEqualTo("list");
      assertThat(answer.at("/data/0/object").asText()).isEqualTo("embedding");
      assertThat(answer.at("/data/0/index").asInt()).isZero();
      assertThat(answer.at("/data/0/embedding").toString()).isEqualTo("[0.125,0.25,-0.5]");
      assertThat(answer.at("/usage/total_tokens").asInt()).isEqualTo(3);
    }
  }

  @Test
  void aCapacityAnswerFailsAMappedModelOverToTheLocalBackend() {
    try (GatewayHarness h = start("ollama")) {
      h.cloud.stubFor(post("/v1/embeddings").willReturn(OpenAiStubs.atCapacity()));

      HttpResponse<String> response = h.post("/v1/embeddings", GatewayHarness.SILVER_KEY,
          "{\"model\":\"text-embedding-3-small\",\"input\":\"hi\"}");

      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(json(response.body()).get("model").asText()).isEqualTo("nomic-embed-text");
    }
  }

  @Test
  void aModelWithoutItsOwnLocalMappingIsNeverEmbeddedByAnotherModel() {
    try (GatewayHarness h = start("ollama")) {
      h.cloud.stubFor(post("/v1/embeddings").willReturn(OpenAiStubs.atCapacity()));
      String body = "{\"model\":\"text-embedding-3-large\",\"input\":\"hi\"}";

      HttpResponse<String> afterCapacity = h.post("/v1/embeddings", GatewayHarness.GOLD_KEY, body);
      setBreaker(h, "open");
      HttpResponse<String> breakerOpen = h.post("/v1/embeddings", GatewayHarness.GOLD_KEY, body);

      for (HttpResponse<String> refused : List.of(afterCapacity, breakerOpen)) {
        JsonNode error = json(refused.body()).get("error");
        assertThat(error.get("code").asText()).isEqualTo("unsupported_on_local");
        assertThat(error.get("message").asText()).contains("text-embedding-3-large", "local.models");
      }
      // The cloud may serve it after the next probe; forced local by an operator, nothing will.
      assertThat(afterCapacity.statusCode()).isEqualTo(503);
      assertThat(afterCapacity.headers().firstValue("retry-after")).isPresent();
      assertThat(breakerOpen.statusCode()).isEqualTo(400);
      assertThat(breakerOpen.headers().firstValue("retry-after")).isEmpty();
      h.ollama.verify(0, postRequestedFor(urlEqualTo("/api/embed")));
    }
  }

  @Test
  void anEmbeddingsRequestWithoutInputGetsAClear400() {
    try (GatewayHarness h = start("ollama")) {
      HttpResponse<String> response = h.post("/v1/embeddings", GatewayHarness.GOLD_KEY, "{\"model\":\"text-embedding-3-small\"}");

      assertThat(response.statusCode()).isEqualTo(400);
      assertThat(json(response.body()).at("/error/param").asText()).isEqualTo("input");
    }
  }

  @Test
  void retrievingAModelAnswersLikeOpenAiOr404ModelNotFound() {
    try (GatewayHarness h = start("ollama")) {
      h.cloud.stubFor(get("/v1/models").willReturn(OpenAiStubs.models("gpt-4o", "text-embedding-3-small")));
      OpenAIClient client = h.openAi(GatewayHarness.GOLD_KEY);

      Model model = client.models().retrieve("gpt-4o");

      assertThat(model.id()).isEqualTo("gpt-4o");
      assertThat(model.ownedBy()).isEqualTo("openai");
      assertThat(model.created()).isEqualTo(1686935002L);
      assertThatThrownBy(() -> client.models().retrieve("gpt-9"))
          .isInstanceOfSatisfying(NotFoundException.class,
              e -> assertThat(e.code()).hasValue("model_not_found"));
      assertThatThrownBy(() -> h.openAi("sk-not-a-key").models().retrieve("gpt-4o"))
          .isInstanceOf(UnauthorizedException.class);

      setBreaker(h, "open");

      Model local = client.models().retrieve("text-embedding-3-small");
      assertThat(local.ownedBy()).isEqualTo("spillway-local");
      assertThatThrownBy(() -> client.models().retrieve("gpt-4o"))
          .as("not served while traffic is local").isInstanceOf(NotFoundException.class);
    }
  }

  @Test
  void theModelListAnswersWithItsSourceAndCacheStatusButNoTokenPoolHeaders() {
    try (GatewayHarness h = start("ollama")) {
      h.cloud.stubFor(get("/v1/models").willReturn(OpenAiStubs.models("gpt-4o", "text-embedding-3-small")));

      HttpResponse<String> list = h.get("/v1/models", GatewayHarness.GOLD_KEY);
      HttpResponse<String> one = h.get("/v1/models/gpt-4o", GatewayHarness.GOLD_KEY);
      HttpResponse<String> missing = h.get("/v1/models/gpt-9", GatewayHarness.GOLD_KEY);
      HttpResponse<String> anonymous = h.get("/v1/models", null);

      assertThat(list.statusCode()).isEqualTo(200);
      assertThat(json(list.body()).path("data").findValuesAsText("id")).containsExactly("gpt-4o", "text-embedding-3-small");
      for (HttpResponse<String> answer : List.of(list, one, missing)) {
        assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("cloud");
        assertThat(answer.headers().firstValue("x-spillway-cache")).hasValue("bypass");
        assertThat(answer.headers().firstValue("x-ratelimit-limit-tokens")).isEmpty();
      }
      assertThat(missing.statusCode()).isEqualTo(404);
      assertThat(anonymous.statusCode()).isEqualTo(401);

      setBreaker(h, "open");
      HttpResponse<String> local = h.get("/v1/models", GatewayHarness.GOLD_KEY);
      assertThat(local.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(json(local.body()).path("data").get(0).path("owned_by").asText()).isEqualTo("spillway-local");
    }
  }
}
