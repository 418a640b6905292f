package io.spillway.app.keys;

import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Admin input at the edges of what a number or a date can hold: an expiry billions of days ahead,
 * the largest long as seconds since the epoch, a rotation overlap of millions of days. Each is a 400
 * naming its field, never a 500, and creates or changes nothing; for every tier.
 */
class AdminInputBoundsTest {
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start();
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  private static void assertBadField(HttpResponse<String> response, String field) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
    JsonNode error = AdminKeys.json(response).get("error");
    assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.get("param").asText()).isEqualTo(field);
    assertThat(error.get("message").asText()).contains(field);
  }

  private static int keyCount() {
    return AdminKeys.json(harness.get("/admin/keys", ADMIN_TOKEN)).get("keys").size();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"gold", "silver", "bronze"})
  void anExpiryTooFarAheadIsA400NamingItsField(String tier) {
    int before = keyCount();
    String key = "{\"team\":\"t-" + tier + "\",\"tier\":\"" + tier + "\",";

    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN, key + "\"expiresIn\":\"400000000000d\"}"), "expiresIn");
    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN, key + "\"expiresIn\":\"36600d\"}"), "expiresIn");
    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN, key + "\"expiresAt\":9223372036854775807}"), "expiresAt");
    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN, key + "\"expiresAt\":-9223372036854775808}"), "expiresAt");
    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN, key + "\"expiresAt\":1e300}"), "expiresAt");
    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN,
        key + "\"expiresAt\":123456789012345678901234567890}"), "expiresAt");
    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN, key + "\"expiresAt\":\"+999999999-12-31T23:59:59Z\"}"),
        "expiresAt");
    assertBadField(harness.post("/admin/keys", ADMIN_TOKEN, key + "\"expiry\":9223372036854775807}"), "expiry");

    assertThat(keyCount()).isEqualTo(before);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"gold", "silver", "bronze"})
  void aHugeRotationOverlapIsA400NamingItsFieldAndTheKeyKeepsItsSecret(String tier) {
    AdminKeys.Created created = AdminKeys.create(harness, "{\"team\":\"r-" + tier + "\",\"tier\":\"" + tier + "\"}");
    String rotate = "/admin/keys/" + created.id() + "/rotate";

    assertBadField(harness.post(rotate, ADMIN_TOKEN, "{\"overlap\":\"99999999999d\"}"), "overlap");
    assertBadField(harness.post(rotate, ADMIN_TOKEN, "{\"overlap\":\"400d\"}"), "overlap");
    assertBadField(harness.post(rotate, ADMIN_TOKEN, "{\"overlap\":9223372036854775807}"), "overlap");

    HttpResponse<String> stillWorks = harness.post("/v1/chat/completions", created.key(),
        GatewayHarness.chatBody("gpt-4o", "hi", false));
    assertThat(stillWorks.statusCode()).as(stillWorks.body()).isNotEqualTo(401);
  }
}
