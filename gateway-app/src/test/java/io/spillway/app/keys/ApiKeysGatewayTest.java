package io.spillway.app.keys;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.errors.UnauthorizedException;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.spillway.app.admin.AuditLog;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LogCapture;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.pipeline.Tier;
import io.spillway.quota.keys.KeyHashes;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Keys created, used, rotated and revoked through the real gateway, with the OpenAI Java SDK as the client. */
class ApiKeysGatewayTest {
  private GatewayHarness harness;

  @AfterEach
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private GatewayHarness start(String extraYaml) {
    harness = GatewayHarness.start(extraYaml);
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hello from the cloud")));
    return harness;
  }

  private static ChatCompletionCreateParams chat(String model) {
    return ChatCompletionCreateParams.builder().model(model).addUserMessage("Summarise the build log").build();
  }

  @ParameterizedTest
  @EnumSource(Tier.class)
  void aCreatedKeyWorksWithTheSdkUntilItIsRevokedThenGets401(Tier tier) {
    start("");
    AdminKeys.Created created = AdminKeys.create(harness,
        "{\"team\":\"ci\",\"tier\":\"" + tier.name().toLowerCase(Locale.ROOT) + "\"}");
    assertThat(created.id()).startsWith("key_");
    assertThat(created.key()).startsWith("sk-spw-");

    ChatCompletion answer = harness.openAi(created.key()).chat().completions().create(chat(ChatModel.GPT_4O.asString()));
    assertThat(answer.choices().get(0).message().content()).contains("hello from the cloud");

    assertThat(AdminKeys.revoke(harness, created.id()).statusCode()).isEqualTo(200);
    assertThatThrownBy(() -> harness.openAi(created.key()).chat().completions().create(chat("gpt-4o")))
        .isInstanceOf(UnauthorizedException.class);
    assertThat(AdminKeys.revoke(harness, created.id()).statusCode()).as("a second revoke").isEqualTo(404);
  }

  @Test
  void theListShowsApiKeysBesideConfigKeysButNeverASecretOrAHash() {
    start("");
    AdminKeys.Created created = AdminKeys.create(harness,
        "{\"team\":\"search\",\"tier\":\"silver\",\"models\":[\"gpt-4o-mini\"],\"monthlyTokens\":5000,"
            + "\"requestsPerMinute\":10,\"expiresIn\":\"30d\"}");

    HttpResponse<String> response = harness.get("/admin/keys", ADMIN_TOKEN);
    JsonNode keys = AdminKeys.json(response).get("keys");

    assertThat(keys).hasSize(4);
    assertThat(keys.get(0).get("source").asText()).isEqualTo("config");
    JsonNode api = keys.get(3);
    assertThat(api.get("id").asText()).isEqualTo(created.id());
    assertThat(api.get("source").asText()).isEqualTo("api");
    assertThat(api.get("team").asText()).isEqualTo("search");
    assertThat(api.get("tier").asText()).isEqualTo("silver");
    assertThat(api.get("models").get(0).asText()).isEqualTo("gpt-4o-mini");
    assertThat(api.get("monthlyTokens").asLong()).isEqualTo(5000);
    assertThat(api.get("requestsPerMinute").asInt()).isEqualTo(10);
    assertThat(api.get("expiresAt").asText()).isEqualTo("2026-12-10T10:00:00Z");
    assertThat(api.get("usedTokens").asLong()).isZero();
    assertThat(response.body()).doesNotContain(created.key(), KeyHashes.hash(created.key()).substring(7, 30));
  }

  @Test
  void keyManagementNeedsTheAdminToken() {
    start("");
    assertThat(harness.post("/admin/keys", null, "{\"team\":\"ci\",\"tier\":\"gold\"}").statusCode()).isEqualTo(401);
    assertThat(harness.post("/admin/keys", GatewayHarness.GOLD_KEY, "{\"team\":\"ci\",\"tier\":\"gold\"}").statusCode())
        .isEqualTo(401);
  }

  @Test
  void aBadCreateRequestGetsAClear400() {
    start("");
    HttpResponse<String> noTier = harness.post("/admin/keys", ADMIN_TOKEN, "{\"team\":\"ci\"}");
    assertThat(noTier.statusCode()).isEqualTo(400);
    assertThat(AdminKeys.json(noTier).at("/error/param").asText()).isEqualTo("tier");
    HttpResponse<String> unknown = harness.post("/admin/keys", ADMIN_TOKEN, "{\"team\":\"ci\",\"tier\":\"gold\",\"owner\":\"ann\"}");
    assertThat(unknown.statusCode()).isEqualTo(400);
    assertThat(AdminKeys.json(unknown).at("/error/message").asText()).contains("owner");
    HttpResponse<String> past = harness.post("/admin/keys", ADMIN_TOKEN,
        "{\"team\":\"ci\",\"tier\":\"gold\",\"expiresAt\":\"2020-01-01T00:00:00Z\"}");
    assertThat(past.statusCode()).isEqualTo(400);
  }

  @Test
  void theDesignsShortNamesExpiryAndBudgetAreAccepted() {
    start("");
    AdminKeys.create(harness, "{\"team\":\"ci\",\"tier\":\"gold\",\"expiry\":\"2027-01-01T00:00:00Z\",\"budget\":900}");

    JsonNode key = AdminKeys.json(harness.get("/admin/keys", ADMIN_TOKEN)).at("/keys/3");

    assertThat(key.get("expiresAt").asText()).isEqualTo("2027-01-01T00:00:00Z");
    assertThat(key.get("monthlyTokens").asLong()).isEqualTo(900);
    HttpResponse<String> numericExpiry = harness.post("/admin/keys", ADMIN_TOKEN,
        "{\"team\":\"ci\",\"tier\":\"gold\",\"expiresAt\":1798761600}");
    assertThat(AdminKeys.json(numericExpiry).get("expiresAt").asText()).isEqualTo("2027-01-01T00:00:00Z");
  }

  @Test
  void anExpiredKeyGets401SayingItExpired() {
    start("");
    AdminKeys.Created created = AdminKeys.create(harness, "{\"team\":\"ci\",\"tier\":\"gold\",\"expiresIn\":\"1h\"}");
    assertThat(harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o", "hi", false)).statusCode())
        .isEqualTo(200);

    harness.clock.advance(Duration.ofMinutes(61));

    HttpResponse<String> expired = harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o", "hi", false));
    assertThat(expired.statusCode()).isEqualTo(401);
    JsonNode error = AdminKeys.json(expired).get("error");
    assertThat(error.get("code").asText()).isEqualTo("api_key_expired");
    assertThat(error.get("message").asText()).contains(created.id(), "expired at 2026-11-10T11:00:00Z");
  }

  @Test
  void aModelOutsideTheKeysAllowListGets403ModelNotAllowed() {
    start("");
    AdminKeys.Created created = AdminKeys.create(harness,
        "{\"team\":\"ci\",\"tier\":\"silver\",\"models\":[\"gpt-4o-mini\"]}");
    assertThat(harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o-mini", "hi", false)).statusCode())
        .isEqualTo(200);

    HttpResponse<String> refused = harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o", "hi", false));

    assertThat(refused.statusCode()).isEqualTo(403);
    JsonNode error = AdminKeys.json(refused).get("error");
    assertThat(error.get("code").asText()).isEqualTo("model_not_allowed");
    assertThat(error.get("param").asText()).isEqualTo("model");
    assertThat(error.get("message").asText()).contains("gpt-4o", "gpt-4o-mini");
    assertThat(harness.cloud.getAllServeEvents()).hasSize(1);
  }

  @Test
  void aRotatedKeysOldSecretWorksUntilTheOverlapEnds() {
    start("");
    AdminKeys.Created created = AdminKeys.create(harness, "{\"team\":\"ci\",\"tier\":\"gold\"}");

    HttpResponse<String> rotation = harness.post("/admin/keys/" + created.id() + "/rotate", ADMIN_TOKEN,
        "{\"overlap\":\"10m\"}");
    assertThat(rotation.statusCode()).as(rotation.body()).isEqualTo(200);
    JsonNode rotated = AdminKeys.json(rotation);
    String newKey = rotated.get("key").asText();
    assertThat(rotated.get("id").asText()).isEqualTo(created.id());
    assertThat(newKey).isNotEqualTo(created.key());
    assertThat(rotated.get("previousKeyValidUntil").asText()).isEqualTo("2026-11-10T10:10:00Z");

    assertThat(harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o", "hi", false)).statusCode())
        .as("old secret during the overlap").isEqualTo(200);
    assertThat(harness.post("/v1/chat/completions", newKey, chatBody("gpt-4o", "hi", false)).statusCode())
        .isEqualTo(200);

    harness.clock.advance(Duration.ofMinutes(10));

    HttpResponse<String> old = harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o", "hi", false));
    assertThat(old.statusCode()).isEqualTo(401);
    assertThat(AdminKeys.json(old).at("/error/message").asText()).contains("rotated");
    assertThat(harness.post("/v1/chat/completions", newKey, chatBody("gpt-4o", "hi", false)).statusCode())
        .isEqualTo(200);
  }

  @Test
  void aConfigFileKeyCannotBeRevokedOrRotatedThroughTheApi() {
    start("");
    String fingerprint = AdminKeys.json(harness.get("/admin/keys", ADMIN_TOKEN)).at("/keys/0/id").asText();

    HttpResponse<String> revoke = AdminKeys.revoke(harness, fingerprint);
    HttpResponse<String> rotate = harness.post("/admin/keys/" + fingerprint + "/rotate", ADMIN_TOKEN, "");

    for (HttpResponse<String> refused : List.of(revoke, rotate)) {
      assertThat(refused.statusCode()).isEqualTo(403);
      assertThat(AdminKeys.json(refused).at("/error/code").asText()).isEqualTo("config_key");
      assertThat(AdminKeys.json(refused).at("/error/message").asText()).contains("config file", "reload");
    }
    assertThat(harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, chatBody("gpt-4o", "hi", false))
        .statusCode()).isEqualTo(200);
  }

  @Test
  void aKeysOwnRateLimitAnswers429WithRetryAfter() {
    start("");
    AdminKeys.Created created = AdminKeys.create(harness,
        "{\"team\":\"ci\",\"tier\":\"gold\",\"requestsPerMinute\":2}");
    for (int i = 0; i < 2; i++) {
      assertThat(harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o", "hi", false)).statusCode())
          .isEqualTo(200);
    }

    HttpResponse<String> limited = harness.post("/v1/chat/completions", created.key(), chatBody("gpt-4o", "hi", false));

    assertThat(limited.statusCode()).isEqualTo(429);
    assertThat(AdminKeys.json(limited).at("/error/code").asText()).isEqualTo("rate_limit_exceeded");
    assertThat(AdminKeys.json(limited).at("/error/message").asText()).contains("key " + created.id());
    assertThat(limited.headers().firstValue("retry-after")).isPresent();
    assertThat(limited.headers().firstValue("x-ratelimit-limit-requests")).hasValue("2");
    assertThat(harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, chatBody("gpt-4o", "hi", false))
        .statusCode()).as("the team's other keys are not limited").isEqualTo(200);
  }

  @Test
  void aKeysOwnTokenBudgetRefusesWithInsufficientQuotaOnceUsed() {
    start("");
    harness.cloud.stubFor(post("/v1/chat/completions")
        .willReturn(OpenAiStubs.json(200, OpenAiStubs.chatCompletionBody("ok", 400, 200))));
    AdminKeys.Created created = AdminKeys.create(harness,
        "{\"team\":\"ci\",\"tier\":\"gold\",\"monthlyTokens\":1000}");
    String small = "{\"model\":\"gpt-4o\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    assertThat(harness.post("/v1/chat/completions", created.key(), small).statusCode()).isEqualTo(200);
    assertThat(AdminKeys.json(harness.get("/admin/keys", ADMIN_TOKEN)).at("/keys/3/usedTokens").asLong())
        .isEqualTo(600);
    assertThat(harness.post("/v1/chat/completions", created.key(), small).statusCode()).isEqualTo(200);

    HttpResponse<String> refused = harness.post("/v1/chat/completions", created.key(), small);

    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(AdminKeys.json(refused).at("/error/code").asText()).isEqualTo("insufficient_quota");
    assertThat(AdminKeys.json(refused).at("/error/message").asText()).contains(created.id(), "1200 of its 1000");
    assertThat(refused.headers().firstValue("retry-after")).isPresent();
  }

  @Test
  void everyAdminActionWritesOneAuditLineWithoutSecrets() {
    start("");
    try (LogCapture logs = new LogCapture()) {
      AdminKeys.Created created = AdminKeys.create(harness, "{\"team\":\"ci\",\"tier\":\"gold\"}");
      JsonNode rotated = AdminKeys.json(harness.post("/admin/keys/" + created.id() + "/rotate", ADMIN_TOKEN, ""));
      AdminKeys.revoke(harness, created.id());
      harness.post("/admin/breaker", ADMIN_TOKEN, "{\"state\":\"open\"}");
      harness.post("/admin/cache/invalidate", ADMIN_TOKEN, "{}");
      harness.post("/admin/reload", ADMIN_TOKEN, "");

      List<String> audit = logs.lines().stream().filter(line -> line.contains(" " + AuditLog.LOGGER + " ")).toList();

      assertThat(audit).hasSize(6);
      assertThat(audit.get(0)).contains("\"action\":\"key.create\"", created.id(), "\"team\":\"ci\"");
      assertThat(audit.get(1)).contains("\"action\":\"key.rotate\"", created.id());
      assertThat(audit.get(2)).contains("\"action\":\"key.revoke\"", created.id());
      assertThat(audit.get(3)).contains("\"action\":\"breaker.override\"", "\"state\":\"open\"");
      assertThat(audit.get(4)).contains("\"action\":\"cache.purge\"");
      assertThat(audit.get(5)).contains("\"action\":\"config.reload\"");
      String who = "\"who\":\"admin-token:" + KeyHashes.hash(ADMIN_TOKEN).substring(7, 15) + "\"";
      assertThat(audit).allSatisfy(line -> assertThat(line)
          .contains(who, "\"at\":\"2026-11-10T10:00:00Z\"", "\"from\":")
          .doesNotContain(ADMIN_TOKEN, created.key(), rotated.get("key").asText(), KeyHashes.hash(created.key())));
    }
  }
}
