package io.spillway.app.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The dashboard's rendering of sections whose owners live in other modules (quota pools), checked
 * in Chromium against a plain JDK HTTP server that serves the page and admin JSON in the shapes the
 * page accepts. The live gateway is covered by {@link DashboardBrowserTest}.
 */
class DashboardRenderingTest {
  static final String TOKEN = "render-token";

  static final String STATUS = """
      {"version":"9.9.9","uptimeSeconds":3725,"ready":true,
       "backends":[{"name":"cloud","ready":true},{"name":"local","ready":false}],
       "traffic":{"requests":1234,"capacityRate":0.125,"capacityWindow":"5m"},
       "breaker":{"mode":"local-fallback","state":"half_open","since":"2026-11-10T10:05:00Z","serving":"cloud","history":[
         {"at":"2026-11-10T10:00:00Z","from":"closed","to":"open","reason":"capacity x3"},
         {"at":"2026-11-10T10:05:00Z","from":"open","to":"half_open"}]},
       "admin":{"endpoints":["/admin/status","/admin/series","/admin/quota"]}}
      """;

  static final String SERIES = """
      {"step":"1m","window":"1h","points":[
        {"t":"2026-11-10T10:03:00Z","requests":10,"capacityRate":0.5},
        {"t":"2026-11-10T10:04:00Z","requests":0,"capacityRate":0.0},
        {"t":"2026-11-10T10:05:00Z","requests":30,"capacityRate":0.1}]}
      """;

  static final Map<String, String> QUOTA_SHAPES = Map.of(
      "array", """
          {"alertAt":0.8,"softAt":0.95,"pools":[
            {"tier":"gold","used":2000000,"limit":10000000,"band":"normal"},
            {"tier":"silver","used":24000000,"limit":25000000,"band":"soft"},
            {"tier":"bronze","used":15000000,"limit":15000000,"band":"hard"}]}
          """,
      "object", """
          {"month":"2026-11","monthlyTokens":50000000,"store":{"kind":"memory","healthy":true},"pools":{
            "gold":{"share":0.2,"limit":10000000,"used":2000000,"usageRatio":0.2,"band":"normal","alertAt":0.8,"softAt":0.95},
            "silver":{"share":0.5,"limit":25000000,"used":24000000,"usageRatio":0.96,"band":"soft","alertAt":0.8,"softAt":0.95},
            "bronze":{"share":0.3,"limit":15000000,"used":15000000,"usageRatio":1.0,"band":"hard","alertAt":0.8,"softAt":0.95}},
           "teams":{"web":{"used":24000000}}}
          """);

  static HttpServer serve(String quota) throws IOException {
    return serve(STATUS, quota);
  }

  static HttpServer serve(String statusJson, String quota) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      String path = exchange.getRequestURI().getPath();
      byte[] body;
      String type = "application/json";
      int status = 200;
      if (path.equals("/dashboard")) {
        try (InputStream in = DashboardRenderingTest.class.getResourceAsStream(Dashboard.RESOURCE)) {
          body = in.readAllBytes();
        }
        type = "text/html; charset=utf-8";
      } else if (!("Bearer " + TOKEN).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
        status = 401;
        body = "{}".getBytes(StandardCharsets.UTF_8);
      } else {
        String json = switch (path) {
          case "/admin/status" -> statusJson;
          case "/admin/series" -> SERIES;
          case "/admin/quota" -> quota;
          default -> null;
        };
        status = json == null ? 404 : 200;
        body = (json == null ? "{}" : json).getBytes(StandardCharsets.UTF_8);
      }
      exchange.getResponseHeaders().set("Content-Type", type);
      exchange.sendResponseHeaders(status, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    server.start();
    return server;
  }

  private static String text(String id) {
    return "(document.getElementById('" + id + "') || {}).textContent";
  }

  @ParameterizedTest
  @ValueSource(strings = {"array", "object"})
  void poolsShowUsageBandsAndMarkersAndTheRestOfTheStatus(String shape) throws Exception {
    HttpServer server = serve(QUOTA_SHAPES.get(shape));
    try (HeadlessChromium chromium = HeadlessChromium.start()) {
      chromium.navigate("http://127.0.0.1:" + server.getAddress().getPort() + "/dashboard#token=" + TOKEN);
      await().atMost(Duration.ofSeconds(15)).until(() -> "1234".equals(chromium.eval(text("requests-total"))));

      assertThat(chromium.eval("String(document.querySelectorAll('#quota .pool').length)")).isEqualTo("3");
      assertThat(chromium.eval(text("quota"))).contains("gold", "20 % · normal", "silver", "96 % · soft",
          "bronze", "100 % · hard");
      assertThat(chromium.eval("Array.from(document.querySelectorAll('#quota .bar > .fill'))"
          + ".map(f => f.style.background).join(',')")).isEqualTo("var(--ok),var(--warn),var(--bad)");
      assertThat(chromium.eval("String(document.querySelectorAll('#quota .bar > .mark').length)"))
          .as("alert, soft and 100 % markers on each of 3 pools").isEqualTo("9");
      assertThat(chromium.eval(text("breaker-state"))).isEqualTo("half-open: one request probes the cloud");
      assertThat(chromium.eval(text("breaker-mode")))
          .isEqualTo("decided by: Redis does not answer: this replica decides alone");
      assertThat(chromium.eval(text("breaker-history")))
          .as("newest transition first, 24-hour times, states in words")
          .containsSubsequence("10:05:00 open → half-open", "10:00:00 closed → open (capacity x3)");
      assertThat(chromium.eval(text("serving"))).as("the probe, and the rest tried on the cloud once").isEqualTo("cloud, tried once (local not ready)");
      assertThat(chromium.eval(text("backends"))).contains("cloud — probing: one request tests whether it has room again",
          "local — not ready");
      assertThat(chromium.eval(text("capacity-rate"))).isEqualTo("13 %");
      assertThat(chromium.eval(text("uptime"))).isEqualTo("1h 2m");
      assertThat(chromium.eval(text("admission"))).isEqualTo("not available");
      assertThat(chromium.eval(text("risk"))).isEqualTo("not available");
      assertThat(chromium.eval("String(document.querySelectorAll('#chart-requests rect').length)")).isEqualTo("2");
      assertThat(chromium.errors()).isEmpty();
    } finally {
      server.stop(0);
    }
  }
  @org.junit.jupiter.api.Test
  void cloudRoutesAreListedInOrderWithTheirStatesAndServingNamesTheRouteInUse() throws Exception {
    String status = STATUS.strip();
    status = status.substring(0, status.length() - 1) + """
        ,"routes":[
          {"name":"openai","kind":"openai","baseUrl":"https://api.openai.com/v1","breaker":{"route":"openai",
           "state":"open","override":"auto","nextProbeAt":"2026-11-10T10:10:00Z"}},
          {"name":"azure-eu","kind":"azure","baseUrl":"https://eu.openai.azure.com","breaker":{"route":"azure-eu",
           "state":"closed","override":"auto","nextProbeAt":null}}]}
        """;
    HttpServer server = serve(status.replace("\"serving\":\"cloud\",", ""), QUOTA_SHAPES.get("array"));
    try (HeadlessChromium chromium = HeadlessChromium.start()) {
      chromium.navigate("http://127.0.0.1:" + server.getAddress().getPort() + "/dashboard#token=" + TOKEN);
      await().atMost(Duration.ofSeconds(15)).until(() -> "1234".equals(chromium.eval(text("requests-total"))));

      assertThat(chromium.eval(text("routes"))).containsSubsequence(
          "openai (openai): at capacity: not used until 10:10:00, then probed", "azure-eu (azure): serving");
      assertThat(chromium.eval("Array.from(document.querySelectorAll('#routes li')).map(li => li.className).join(',')"))
          .isEqualTo("bad,ok");
      assertThat(chromium.eval(text("serving"))).isEqualTo("cloud (azure-eu)");
      assertThat(chromium.errors()).isEmpty();
    } finally {
      server.stop(0);
    }
  }

  @org.junit.jupiter.api.Test
  void spendShowsTheMonthsTotalAndTheTeamsAgainstTheirBudgets() throws Exception {
    String quota = QUOTA_SHAPES.get("object").strip();
    quota = quota.substring(0, quota.length() - 1) + """
        ,"spend":{"month":"2026-11","currency":"USD","store":"redis","usd":1.5,"defaultPricesAsOf":"2025-08-07",
          "teams":{"web":{"usd":1.2,"monthlyUsd":1.0,"usageRatio":1.2,"band":"hard","byTier":{"silver":1.2}},
                   "ci":{"usd":0.3,"byTier":{"gold":0.3}}}}}
        """;
    HttpServer server = serve(quota);
    try (HeadlessChromium chromium = HeadlessChromium.start()) {
      chromium.navigate("http://127.0.0.1:" + server.getAddress().getPort() + "/dashboard#token=" + TOKEN);
      await().atMost(Duration.ofSeconds(15)).until(() -> "1234".equals(chromium.eval(text("requests-total"))));

      assertThat(chromium.eval(text("spend"))).containsSubsequence("all teams (2026-11)", "$1.50",
          "web", "$1.20 / $1.00 · 120 %", "ci", "$0.3000", "all replicas (redis)", "2025-08-07");
      assertThat(chromium.eval("String(document.querySelectorAll('#spend .bar').length)"))
          .as("a bar only for the team with a budget").isEqualTo("1");
      assertThat(chromium.errors()).isEmpty();
    } finally {
      server.stop(0);
    }
  }
}
