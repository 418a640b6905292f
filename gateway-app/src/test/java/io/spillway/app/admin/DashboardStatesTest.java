package io.spillway.app.admin;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * What an operator sees at a glance, in a real headless Chromium against the real gateway, in each
 * state that matters: healthy, a capacity storm, the breaker forced open, the local backend down,
 * and a gateway without a local backend. Each test reads the page's text through DevTools and
 * saves a screenshot under {@code target/dashboard-screenshots/} for people to look at.
 */
class DashboardStatesTest {
  static final Path SCREENSHOTS = Path.of("target", "dashboard-screenshots");
  static final String LOCAL_OPENAI = "local:\n  kind: openai\n";

  private static String text(String id) {
    return "(document.getElementById('" + id + "') || {}).textContent";
  }

  private static String count(String selector) {
    return "String(document.querySelectorAll('" + selector + "').length)";
  }

  private static void chat(GatewayHarness harness, int status) {
    assertThat(harness.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
        GatewayHarness.chatBody("gpt-4o", "hello", false)).statusCode()).isEqualTo(status);
  }

  /** Opens the dashboard once the gateway has answered {@code requests} requests, and saves its screenshot. */
  private static void open(GatewayHarness harness, HeadlessChromium chromium, int requests, String state)
      throws IOException {
    chromium.navigate(harness.url("/dashboard#token=" + GatewayHarness.ADMIN_TOKEN));
    await().atMost(Duration.ofSeconds(15)).until(() -> String.valueOf(requests).equals(chromium.eval(text("requests-total"))));
    byte[] png = chromium.screenshot(SCREENSHOTS.resolve(state + ".png"));
    assertThat(png).as("a PNG of the whole page").startsWith((byte) 0x89, (byte) 'P', (byte) 'N', (byte) 'G').hasSizeGreaterThan(20_000);
    assertThat(chromium.eval(text("problems"))).isEmpty();
    assertThat(chromium.errors()).isEmpty();
  }

  private static void awaitLocalChecked(GatewayHarness harness) {
    await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().local().readiness().checked());
  }

  private static String summaryLevel(HeadlessChromium chromium) {
    return chromium.eval("document.getElementById('summary').className");
  }

  private static String runbookLink(HeadlessChromium chromium) {
    return chromium.eval("document.getElementById('summary-runbook').getAttribute('href')");
  }

  @Test
  void healthyShowsTheCloudServingLocalStandingByAndEachTeamsRequestsAndTokens() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start(LOCAL_OPENAI);
        HeadlessChromium chromium = HeadlessChromium.start()) {
      awaitLocalChecked(harness);
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("from the cloud")));
      chat(harness, 200);
      chat(harness, 200);

      open(harness, chromium, 2, "healthy");

      assertThat(summaryLevel(chromium)).isEqualTo("ok");
      assertThat(chromium.eval(text("summary-doing")))
          .isEqualTo("Serving from the cloud; the local backend is ready for a capacity storm.");
      assertThat(chromium.eval(text("summary-you-can"))).isEqualTo("Nothing to do.");
      assertThat(runbookLink(chromium)).isEqualTo("/dashboard/runbook#runbooks");
      assertThat(chromium.eval(text("serving"))).isEqualTo("cloud");
      assertThat(chromium.eval("Array.from(document.querySelectorAll('#backends li')).map(li => li.textContent).join('\\n')"))
          .isEqualTo("cloud — serving\nlocal — ready, standing by for a capacity storm");
      assertThat(chromium.eval(text("breaker-state"))).isEqualTo("closed: the cloud takes traffic");
      assertThat(chromium.eval(count("#chart-requests rect.cloud"))).isEqualTo("1");
      assertThat(chromium.eval(count("#chart-requests rect.local"))).isEqualTo("0");
      assertThat(chromium.eval(count("#chart-requests .cap-mark"))).isEqualTo("0");
      assertThat(chromium.eval("document.querySelector('#chart-requests rect.cloud title').textContent"))
          .isEqualTo("10:00 cloud: 2");
      assertThat(chromium.eval("document.querySelector('.series-window').textContent"))
          .as("a gateway up for a minute is not drawn as a sliver of an hour").isEqualTo("since start (1 min)");
      assertThat(chromium.eval("Array.from(document.querySelectorAll('#chart-requests text.time')).map(t => t.textContent).join(' ')"))
          .as("24-hour minutes").isEqualTo("09:58 10:00");
      assertThat(chromium.eval("document.querySelector('#latency .latency-cloud').textContent"))
          .as("p50 and p99 of the two cloud answers").matches("cloud[\\d.]+ m?s[\\d.]+ m?s2");
      assertThat(chromium.eval(count("#chart-latency circle.cloud"))).as("p50 and p99 of the one minute").isEqualTo("2");
      assertThat(chromium.eval("document.querySelector('#chart-requests rect.before + text').textContent"))
          .as("the minutes before the start are marked, not drawn as quiet").isEqualTo("not started");
      assertThat(chromium.eval("document.querySelector('#teams tr.team').textContent"))
          .as("team release: 2 requests, their tokens, the month's tokens, spend").startsWith("release2");
      assertThat(chromium.eval(text("teams"))).contains("Requests and tokens in/out: this replica since it started.");
    }
  }

  @Test
  void aStormShowsTrafficOnLocalTheCapacityAnswersOnTheTimelineAndWhenTheCloudIsTriedAgain() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start(LOCAL_OPENAI);
        HeadlessChromium chromium = HeadlessChromium.start()) {
      awaitLocalChecked(harness);
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      harness.ollama.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("served locally")));
      chat(harness, 200);
      chat(harness, 200);
      chat(harness, 200);
      chat(harness, 200);

      open(harness, chromium, 4, "storm");

      assertThat(summaryLevel(chromium)).isEqualTo("warn");
      assertThat(chromium.eval(text("summary-doing"))).isEqualTo("The cloud is at capacity: requests go to the"
          + " local backend, and Spillway tries the cloud again in 5m 0s.");
      assertThat(runbookLink(chromium)).isEqualTo("/dashboard/runbook#runbook-spillwaycapacitystorm");
      assertThat(chromium.eval(text("serving"))).isEqualTo("local");
      String backends = chromium.eval(text("backends"));
      assertThat(backends).contains("cloud — at capacity: not used until 10:05:00, then probed", "local — serving")
          .doesNotContain("cloud — serving", "cloud — ready");
      assertThat(chromium.eval("document.querySelector('#backends li').className")).isEqualTo("bad");
      assertThat(chromium.eval(text("breaker-state"))).isEqualTo("open: the cloud is at capacity");
      assertThat(chromium.eval(text("breaker-history"))).startsWith("10:00:00 closed → open (3 capacity answers in a row")
          .contains("local for 5m");
      assertThat(chromium.eval(count("#chart-requests rect.local"))).isEqualTo("1");
      assertThat(chromium.eval("document.querySelector('#chart-requests .cap-mark title').textContent"))
          .isEqualTo("10:00: 3 capacity answers");
      assertThat(chromium.eval(count("#chart-requests line.transition"))).as("the breaker opening").isEqualTo("1");
      assertThat(chromium.eval(text("capacity-rate"))).isEqualTo("100 %");
      String admission = chromium.eval(text("admission"));
      assertThat(admission).as("the waiting area in words").contains("cloud: in flight", "local: waiting by class",
          "gold 0 · silver 0 · bronze 0 · low signal 0").doesNotContain("low_signal", "cloud.waiting");
      assertThat(chromium.eval(text("risk"))).contains("request growth (part)", "counted on", "this replica's requests")
          .doesNotContain("components.", "counts.mode");

      chromium.navigate(harness.url("/dashboard/runbook#runbook-spillwaycapacitystorm"));
      assertThat(chromium.eval("document.getElementById('runbook-spillwaycapacitystorm').textContent"))
          .as("the summary's link lands on its runbook").isEqualTo("Runbook: SpillwayCapacityStorm");
    }
  }

  @Test
  void forcedOpenSaysAnOperatorSentTrafficLocalAndHowToHandItBack() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start(LOCAL_OPENAI);
        HeadlessChromium chromium = HeadlessChromium.start()) {
      awaitLocalChecked(harness);
      harness.ollama.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("served locally")));
      assertThat(harness.post("/admin/breaker", GatewayHarness.ADMIN_TOKEN, "{\"state\":\"open\"}").statusCode())
          .isEqualTo(200);
      chat(harness, 200);

      open(harness, chromium, 1, "forced-open");

      assertThat(summaryLevel(chromium)).isEqualTo("warn");
      assertThat(chromium.eval(text("summary-doing"))).isEqualTo("An operator forced all traffic to the local backend.");
      assertThat(chromium.eval(text("summary-you-can")))
          .isEqualTo("When the cloud should take traffic again: POST /admin/breaker {\"state\":\"auto\"}.");
      assertThat(runbookLink(chromium)).isEqualTo("/dashboard/runbook#runbook-spillwaybreakerforcedopen");
      assertThat(chromium.eval(text("breaker-state"))).isEqualTo("forced open by an operator");
      assertThat(chromium.eval(text("backends")))
          .contains("cloud — off: forced open by an operator, traffic goes local", "local — serving")
          .doesNotContain("cloud — serving");
      assertThat(chromium.eval(count("#chart-requests rect.local"))).isEqualTo("1");
      assertThat(chromium.eval(count("#chart-requests .cap-mark"))).isEqualTo("0");
    }
  }

  @Test
  void localDownWarnsBeforeAStormNeedsIt() throws Exception {
    int closed;
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      closed = socket.getLocalPort();
    }
    try (GatewayHarness harness = GatewayHarness.start(LOCAL_OPENAI + "  baseUrl: http://127.0.0.1:" + closed + "\n");
        HeadlessChromium chromium = HeadlessChromium.start()) {
      await().atMost(Duration.ofSeconds(10)).until(() -> !harness.gateway().local().readiness().ready());
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("from the cloud")));
      chat(harness, 200);

      open(harness, chromium, 1, "local-down");

      assertThat(summaryLevel(chromium)).isEqualTo("warn");
      assertThat(chromium.eval(text("summary-doing"))).isEqualTo("Serving from the cloud; the local backend is not"
          + " ready, so a capacity storm would have nowhere to go.");
      assertThat(runbookLink(chromium)).isEqualTo("/dashboard/runbook#runbook-spillwaylocalbackenddown");
      assertThat(chromium.eval(text("backends"))).contains("cloud — serving", "local — not ready");
      assertThat(chromium.eval(text("ready"))).isEqualTo("yes");
    }
  }

  @Test
  void withoutALocalBackendAStormSaysRequestsStillGoToTheCloudWithItsRetryAfter() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("local:\n  enabled: false\n");
        HeadlessChromium chromium = HeadlessChromium.start()) {
      harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      chat(harness, 503);
      chat(harness, 503);
      chat(harness, 503);

      open(harness, chromium, 3, "no-local-storm");

      assertThat(chromium.eval(text("summary-doing"))).isEqualTo("The cloud is at capacity and there is no local"
          + " backend (local.enabled: false): requests still go to the cloud, and those it refuses get 503 with the"
          + " cloud's own Retry-After.");
      assertThat(runbookLink(chromium)).isEqualTo("/dashboard/runbook#runbook-spillwaycloudatcapacity");
      assertThat(chromium.eval(text("serving"))).isEqualTo("cloud (at capacity)");
      assertThat(chromium.eval(text("backends")))
          .contains("cloud — at capacity: still tried (no local backend)", "local — none (local.enabled: false)")
          .doesNotContain("local for");
      assertThat(chromium.eval(text("breaker-history")))
          .contains("no local backend (local.enabled: false), so requests still go to the cloud")
          .doesNotContain("local for");
      assertThat(chromium.eval(text("local-servers"))).isEqualTo("local backend off");
      assertThat(chromium.eval(count("#latency tr"))).as("a header and cloud, no local row").isEqualTo("2");
    }
  }
}
