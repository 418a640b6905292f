package io.spillway.app.admin;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.Version;
import io.spillway.core.json.Json;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The dashboard in a real headless Chromium against a running gateway. */
class DashboardBrowserTest {
  private static String text(String id) {
    return "(document.getElementById('" + id + "') || {}).textContent";
  }

  private static void chat(GatewayHarness harness) {
    assertThat(harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
        GatewayHarness.chatBody("gpt-4o", "hello", false)).statusCode()).isEqualTo(200);
  }

  @Test
  void dashboardShowsARealFailoverLiveWithoutConsoleErrors() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("local:\n  kind: openai");
        HeadlessChromium chromium = HeadlessChromium.start()) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      harness.ollama.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("served locally")));
      chat(harness);
      chat(harness);
      chat(harness);
      String dashboard = harness.url("/dashboard");

      chromium.navigate(dashboard);
      await().atMost(Duration.ofSeconds(15)).until(() -> "false".equals(
          chromium.eval("String((document.getElementById('login') || {}).hidden)")));
      assertThat(chromium.eval(text("login-message"))).isEmpty();

      chromium.navigate(dashboard + "?live#token=" + GatewayHarness.ADMIN_TOKEN);
      await().atMost(Duration.ofSeconds(15)).until(() -> "3".equals(chromium.eval(text("requests-total"))));

      assertThat(chromium.eval(text("version"))).isEqualTo(Version.VERSION);
      assertThat(chromium.eval(text("breaker-state"))).isEqualTo("open: the cloud is at capacity");
      assertThat(chromium.eval(text("breaker-mode"))).isEqualTo("decided by: this replica's own breaker");
      assertThat(chromium.eval(text("breaker-history"))).contains("closed → open");
      assertThat(chromium.eval(text("serving"))).isEqualTo("local");
      assertThat(chromium.eval(text("backends"))).as("never 'ready' while its breaker is open")
          .contains("cloud — at capacity: not used until 10:05:00", "local — serving").doesNotContain("cloud — ready");
      String cloudLimit = String.valueOf(harness.config().quota().admission().cloudConcurrency());
      assertThat(chromium.eval(text("admission"))).as("the real waiting area's snapshot, in words")
          .startsWith("0waiting").contains("cloud: in flight0 of " + cloudLimit, "bronze 0");
      String threshold = String.format(java.util.Locale.ROOT, "threshold %.2f",
          harness.config().shaping().risk().threshold());
      assertThat(chromium.eval(text("risk"))).as("the real risk index").contains(threshold, "request growth (part)");
      assertThat(chromium.eval(text("quota"))).as("the real quota pools from /admin/quota")
          .contains("gold", "silver", "bronze", "0 % · ok");
      assertThat(chromium.eval("String(document.querySelectorAll('#quota .pool').length)")).isEqualTo("3");
      assertThat(chromium.eval(text("capacity-rate"))).as("3 capacity answers of 3 cloud answers").isEqualTo("100 %");
      assertThat(chromium.eval("String(document.querySelectorAll('#chart-requests rect.minute').length)"))
          .as("one minute, all of it local").isEqualTo("1");
      assertThat(chromium.eval("String(document.querySelectorAll('#chart-capacity polyline').length)")).isEqualTo("1");
      assertThat(chromium.eval("location.hash")).as("the token is taken out of the address bar").isEmpty();
      assertThat(chromium.eval(text("problems"))).isEmpty();

      chat(harness);
      chat(harness);
      await().atMost(Duration.ofSeconds(15)).until(() -> "5".equals(chromium.eval(text("requests-total"))));

      assertThat(chromium.errors()).isEmpty();
    }
  }

  @Test
  void aWrongTokenBringsBackTheTokenForm() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start(); HeadlessChromium chromium = HeadlessChromium.start()) {
      chromium.navigate(harness.url("/dashboard#token=not-the-token"));

      await().atMost(Duration.ofSeconds(15)).until(() ->
          "The admin token was not accepted.".equals(chromium.eval(text("login-message"))));
      assertThat(chromium.eval("String(document.getElementById('board').hidden)")).isEqualTo("true");
      assertThat(chromium.eval("String(sessionStorage.getItem('spillway.adminToken'))")).isEqualTo("null");

      chromium.forgetEvents();
      chromium.eval("document.getElementById('token-input').value = '" + GatewayHarness.ADMIN_TOKEN + "';"
          + "document.getElementById('login-form').requestSubmit(); 'submitted'");
      await().atMost(Duration.ofSeconds(15)).until(() -> "0".equals(chromium.eval(text("requests-total"))));
      assertThat(chromium.eval(text("breaker-state"))).isEqualTo("closed: the cloud takes traffic");
      assertThat(chromium.errors()).isEmpty();
    }
  }
}
