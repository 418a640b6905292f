package io.spillway.app.observe;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What a hostile client or a careless config puts into a name never reaches the access log as
 * itself: a line separator (U+2028) or a right-to-left override (U+202E) in a model or a team name
 * is written escaped, in the JSON line and in the text line alike; and a config key's id in the log
 * is keyed (HMAC under {@code logging.keyIdSalt}), not the start of the key's unsalted SHA-256, for
 * every tier.
 */
class AccessLogHardeningTest {
  static final String FORGER_KEY = "sk-forger-team-key";
  static final String MODEL = "gpt-4o\u2028status=200\u202Efdp.exe";

  GatewayHarness harness;
  LogCapture logs;

  @BeforeEach
  void capture() {
    logs = new LogCapture();
  }

  @AfterEach
  void stop() {
    if (harness != null) {
      harness.close();
    }
    logs.close();
  }

  private void start(boolean json) {
    harness = GatewayHarness.start("""
        logging: { json: %s, keyIdSalt: a-salt-the-log-reader-does-not-know }
        keys:
          - { key: sk-gold-team-key, team: release, tier: gold }
          - { key: sk-silver-team-key, team: web, tier: silver }
          - { key: sk-bronze-team-key, team: sandbox, tier: bronze }
          - { key: %s, team: "ops\\u2028admin\\u202E", tier: silver }
        """.formatted(json, FORGER_KEY));
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
  }

  private String onlyAccessLine() {
    await().atMost(Duration.ofSeconds(5)).until(() -> logs.accessLines().size() == 1);
    return logs.accessLines().getFirst();
  }

  private static void assertNothingRaw(String line) {
    assertThat(line).doesNotContain("\u2028", "\u202E", "\n", "\r");
    assertThat(line).contains("\\u2028", "\\u202E");
  }

  @ParameterizedTest(name = "json: {0}")
  @ValueSource(booleans = {true, false})
  void separatorsAndBidiOverridesInAModelOrTeamNameAreEscaped(boolean json) throws Exception {
    start(json);

    HttpResponse<String> response = harness.post("/v1/chat/completions", FORGER_KEY,
        GatewayHarness.chatBody(MODEL, "hi", false));

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    String line = onlyAccessLine();
    assertNothingRaw(line);
    if (json) {
      JsonNode parsed = Json.parse(line);
      assertThat(parsed.get("team").asText()).isEqualTo("ops\u2028admin\u202E"); // reads back as it was
      assertThat(parsed.get("model").asText()).isEqualTo(MODEL);
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void aConfigKeysIdInTheLogIsKeyedNotItsHashesPrefix(String key) throws Exception {
    start(true);

    assertThat(harness.post("/v1/chat/completions", key, GatewayHarness.chatBody("gpt-4o", "hi", false))
        .statusCode()).isEqualTo(200);

    String logged = Json.parse(onlyAccessLine()).get("keyId").asText();
    byte[] sha = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
    String unsalted = HexFormat.of().formatHex(sha, 0, 4);
    assertThat(logged).startsWith("cfg_").doesNotContain(unsalted);
    JsonNode keys = Json.parse(harness.get("/admin/keys", ADMIN_TOKEN).body()).get("keys");
    assertThat(keys.findValuesAsText("logId")).as("the admin API maps log ids to config keys").contains(logged);
  }
}
