package io.spillway.app.keys;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.BRONZE_KEY;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.SILVER_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A key's model allow-list (an API-created key's {@code models}, a config key's
 * {@code keys[].models}) also shapes the model listing: {@code GET /v1/models} lists only the
 * allowed models and {@code GET /v1/models/{id}} of another answers 404 {@code model_not_found}.
 */
class ModelAllowListGatewayTest {
  private static final String RESTRICTED_CONFIG_KEY = "sk-reviewers-config-key";

  /** The base keys plus a config key of team reviewers that may use gpt-4o-mini and the small embeddings. */
  private static String config(String tier) {
    return """
        keys:
          - { key: %s, team: release, tier: gold }
          - { key: %s, team: web, tier: silver }
          - { key: %s, team: sandbox, tier: bronze }
          - { key: %s, team: reviewers, tier: %s, models: [gpt-4o-mini, text-embedding-3-small] }
        """.formatted(GOLD_KEY, SILVER_KEY, BRONZE_KEY, RESTRICTED_CONFIG_KEY, tier);
  }

  private static GatewayHarness start(String tier) {
    GatewayHarness h = GatewayHarness.start(config(tier));
    h.cloud.stubFor(get("/v1/models").willReturn(
        OpenAiStubs.models("gpt-4o", "gpt-4o-mini", "gpt-4.1", "text-embedding-3-small")));
    h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
    return h;
  }

  private static List<String> listed(GatewayHarness h, String key) {
    HttpResponse<String> response = h.get("/v1/models", key);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    JsonNode body = AdminKeys.json(response);
    assertThat(body.get("object").asText()).isEqualTo("list");
    List<String> ids = new ArrayList<>();
    body.get("data").forEach(model -> ids.add(model.get("id").asText()));
    return ids;
  }

  private static void seesOnlyItsModels(GatewayHarness h, String key, String label) {
    assertThat(listed(h, key)).as(label).containsExactly("gpt-4o-mini", "text-embedding-3-small");

    HttpResponse<String> allowed = h.get("/v1/models/gpt-4o-mini", key);
    assertThat(allowed.statusCode()).isEqualTo(200);
    assertThat(AdminKeys.json(allowed).get("id").asText()).isEqualTo("gpt-4o-mini");

    HttpResponse<String> hidden = h.get("/v1/models/gpt-4o", key);
    assertThat(hidden.statusCode()).as(label).isEqualTo(404);
    JsonNode error = AdminKeys.json(hidden).get("error");
    assertThat(error.get("code").asText()).isEqualTo("model_not_found");
    assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.get("param").asText()).isEqualTo("model");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"gold", "silver", "bronze"})
  void anApiKeyWithAnAllowListSeesOnlyItsModels(String tier) {
    try (GatewayHarness h = start(tier)) {
      AdminKeys.Created created = AdminKeys.create(h, "{\"team\":\"search\",\"tier\":\"" + tier
          + "\",\"models\":[\"gpt-4o-mini\",\"text-embedding-3-small\"]}");

      seesOnlyItsModels(h, created.key(), "API key");
      assertThat(listed(h, GOLD_KEY)).as("a key without a list sees every model")
          .containsExactly("gpt-4o", "gpt-4o-mini", "gpt-4.1", "text-embedding-3-small");
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"gold", "silver", "bronze"})
  void aConfigKeyWithAnAllowListSeesOnlyItsModelsAndMayUseNoOther(String tier) {
    try (GatewayHarness h = start(tier)) {
      seesOnlyItsModels(h, RESTRICTED_CONFIG_KEY, "config key");

      HttpResponse<String> allowed =
          h.post("/v1/chat/completions", RESTRICTED_CONFIG_KEY, chatBody("gpt-4o-mini", "hi", false));
      HttpResponse<String> refused =
          h.post("/v1/chat/completions", RESTRICTED_CONFIG_KEY, chatBody("gpt-4o", "hi", false));

      assertThat(allowed.statusCode()).isEqualTo(200);
      assertThat(refused.statusCode()).isEqualTo(403);
      assertThat(AdminKeys.json(refused).at("/error/code").asText()).isEqualTo("model_not_allowed");
      assertThat(listed(h, SILVER_KEY)).as("a config key without a list sees every model").hasSize(4);
      JsonNode reviewers = AdminKeys.json(h.get("/admin/keys", ADMIN_TOKEN)).at("/keys/3");
      assertThat(reviewers.get("team").asText()).isEqualTo("reviewers");
      assertThat(reviewers.get("models").toString()).isEqualTo("[\"gpt-4o-mini\",\"text-embedding-3-small\"]");
    }
  }
}
