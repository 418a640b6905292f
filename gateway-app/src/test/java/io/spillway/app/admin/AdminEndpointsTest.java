package io.spillway.app.admin;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.Version;
import io.spillway.core.json.Json;
import io.spillway.quota.keys.KeyHashes;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class AdminEndpointsTest {
  GatewayHarness harness;

  @AfterEach
  void stop() {
    if (harness != null) {
      harness.close();
    }
  }

  private JsonNode adminJson(String path) throws IOException {
    HttpResponse<String> response = harness.get(path, GatewayHarness.ADMIN_TOKEN);
    assertThat(response.statusCode()).as(path + ": " + response.body()).isEqualTo(200);
    return Json.parse(response.body());
  }

  @Test
  void statusShowsVersionUptimeBackendsAndEveryRegisteredSection() throws IOException {
    harness = GatewayHarness.start();
    harness.gateway().status().register("risk", () -> Json.object().put("index", 0.42).put("threshold", 0.65));
    harness.gateway().status().register("broken", () -> {
      throw new IllegalStateException("not ready");
    });
    harness.clock.advance(Duration.ofSeconds(90));

    JsonNode status = adminJson("/admin/status");

    assertThat(status.get("version").asText()).isEqualTo(Version.VERSION);
    assertThat(status.get("uptimeSeconds").asLong()).isEqualTo(90);
    assertThat(status.get("backends").get(0).get("name").asText()).isEqualTo("cloud");
    assertThat(status.get("backends").get(0).get("ready").asBoolean()).isTrue();
    assertThat(status.get("ready").asBoolean()).isTrue();
    assertThat(status.get("risk").get("index").asDouble()).isEqualTo(0.42);
    assertThat(status.get("broken").get("error").asText()).isEqualTo("IllegalStateException");
    assertThat(status.get("traffic").get("requests").asLong()).isZero();
    assertThat(status.get("admin").get("endpoints").toString()).contains("/admin/status", "/admin/reload");
  }

  @Test
  void keysListTeamTierAndFingerprintButNeverAKeyOrItsHash() throws IOException {
    harness = GatewayHarness.start();

    HttpResponse<String> response = harness.get("/admin/keys", GatewayHarness.ADMIN_TOKEN);
    JsonNode keys = Json.parse(response.body()).get("keys");

    assertThat(keys).hasSize(3);
    assertThat(keys.get(0).get("team").asText()).isEqualTo("release");
    assertThat(keys.get(0).get("tier").asText()).isEqualTo("gold");
    String hash = KeyHashes.hash(GatewayHarness.GOLD_KEY);
    assertThat(hash.substring(7)).startsWith(keys.get(0).get("fingerprint").asText());
    assertThat(response.body()).doesNotContain(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY,
        GatewayHarness.BRONZE_KEY, hash.substring(7, 30));
  }

  @Test
  void seriesCountsRequestsPerMinuteOverTheLastHour() throws IOException {
    harness = GatewayHarness.start();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "a", false));
    harness.clock.advance(Duration.ofMinutes(1));
    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "b", false));
    harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "c", false));

    JsonNode series = adminJson("/admin/series");

    JsonNode points = series.get("points");
    assertThat(points).hasSize(60);
    assertThat(points.get(58).get("requests").asInt()).isEqualTo(1);
    assertThat(points.get(59).get("requests").asInt()).isEqualTo(2);
    assertThat(points.get(59).get("cloudAnswers").asInt()).isEqualTo(2);
    assertThat(series.get("totalRequests").asInt()).isEqualTo(3);
  }

  @Test
  void withoutTheTokenTheAdminApiAnswers401() {
    harness = GatewayHarness.start();

    assertThat(harness.get("/admin/status", null).statusCode()).isEqualTo(401);
    assertThat(harness.get("/admin/status", "wrong-token").statusCode()).isEqualTo(401);
    assertThat(harness.get("/admin/keys", GatewayHarness.GOLD_KEY).statusCode()).isEqualTo(401);
    assertThat(harness.post("/admin/reload", null, "{}").statusCode()).isEqualTo(401);
    assertThat(harness.get("/admin/status", null).body()).contains("invalid_admin_token");
  }

  @Test
  void withNoTokenConfiguredTheAdminApiAndDashboardDoNotExist() {
    harness = GatewayHarness.start("admin:\n  token: ''");

    assertThat(harness.get("/admin/status", GatewayHarness.ADMIN_TOKEN).statusCode()).isEqualTo(404);
    assertThat(harness.get("/admin/status", null).statusCode()).isEqualTo(404);
    assertThat(harness.get("/dashboard", null).statusCode()).isEqualTo(404);
    assertThat(harness.get("/dashboard/runbook", null).statusCode()).isEqualTo(404);
  }

  @Test
  void theRunbookIsServedBesideTheDashboardWithItsHeadingsAsAnchors() {
    harness = GatewayHarness.start();

    HttpResponse<String> runbook = harness.get("/dashboard/runbook", null);

    assertThat(runbook.statusCode()).isEqualTo(200);
    assertThat(runbook.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
    assertThat(runbook.headers().firstValue("content-security-policy").orElseThrow()).startsWith("default-src 'none'");
    assertThat(runbook.body()).contains("<h2 id=\"runbook-spillwaycapacitystorm\">Runbook: SpillwayCapacityStorm</h2>",
        "<h2 id=\"runbook-spillwayoutage\">");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "/admin/../admin/status", "/admin/%2e%2e/admin/status", "/admin/%2E%2E/admin/status", "/%61dmin/status",
      "/admin/%73tatus", "//admin/status", "/admin//status", "/admin/./status", "/ADMIN/status",
      "/x/../admin/status", "/v1/../admin/status", "/admin/status%00", "/admin/status/", "/admin/status;x=1",
      "/admin/status%2f..%2fkeys", "/dashboard/../admin/status", "/admin/status/..", "\\admin\\status",
      "http://127.0.0.1/admin/status"})
  void pathTricksNeverReachAnAdminEndpointWithoutTheToken(String target) throws IOException {
    harness = GatewayHarness.start();
    try (RawHttp http = new RawHttp(harness.gateway().port())) {
      RawHttp.Answer answer = http.send("GET", target, null, null);
      assertThat(answer.status()).as(target).isIn(400, 401, 404);
      assertThat(answer.body()).as(target).doesNotContain("uptimeSeconds", "fingerprint", "\"keys\"");
    }
  }

  @Test
  void theRightTokenStillOnlyReachesExactPaths() throws IOException {
    harness = GatewayHarness.start();
    String bearer = "Bearer " + GatewayHarness.ADMIN_TOKEN;
    try (RawHttp http = new RawHttp(harness.gateway().port())) {
      assertThat(http.send("GET", "/admin/status", bearer, null).status()).isEqualTo(200);
      for (String target : List.of("/admin/../admin/keys", "/admin/%2e%2e/admin/keys", "//admin/keys")) {
        assertThat(http.send("GET", target, bearer, null).status()).as(target).isEqualTo(404);
      }
    }
  }

  @Test
  void dashboardIsOneSelfContainedPageWithAStrictPolicy() {
    harness = GatewayHarness.start();

    HttpResponse<String> page = harness.get("/dashboard", null);

    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
    assertThat(page.headers().firstValue("content-security-policy")).hasValueSatisfying(csp ->
        assertThat(csp).contains("default-src 'none'", "connect-src 'self'"));
    assertThat(page.body()).contains("<script>", "/admin/status", "/admin/series", "sessionStorage")
        .doesNotContain("src=\"http", "href=\"http", "src=\"//", "url(", "@import", "<script src",
            "<link rel=\"stylesheet\"", "https://", GatewayHarness.ADMIN_TOKEN);
  }
}
