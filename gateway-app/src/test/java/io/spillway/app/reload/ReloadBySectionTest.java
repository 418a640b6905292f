package io.spillway.app.reload;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.Gateway;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.config.ConfigLoader;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Reload tells the truth, section by section: one key of each config section changes, the config
 * is reloaded, and either the gateway visibly behaves by the new value or the answer (and the log)
 * names the key in {@code restartNeeded}. Never both, never neither.
 */
class ReloadBySectionTest {
  static final String SILVER = "sk-silver-reload";
  static final String GOLD = "sk-gold-reload";

  @TempDir Path dir;
  Path file;
  WireMockServer cloud;
  Gateway gateway;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** Every section written out, so that each row changes exactly one key. */
  String base() {
    return """
        server: { host: 127.0.0.1, port: 0, drainTimeout: 2s, idleTimeout: 60s, maxHops: 1 }
        admin: { token: admin-one }
        cloud: { baseUrl: "%s/v1", apiKey: sk-cloud, timeout: 5s }
        local: { enabled: false, keepWarmEvery: 15m }
        failover: { capacityStreak: 3 }
        keys:
          - { key: %s, team: release, tier: gold }
          - { key: %s, team: web, tier: silver }
        quota:
          monthlyTokens: 4000
          alertAt: 0.8
          defaultMaxTokens: 1024
          flushInterval: 1s
          timezone: UTC
        shaping:
          degrade: never
          risk: { threshold: 0.65 }
        cache: { enabled: false, ttl: 10m }
        store: memory
        metrics: { capacityWindow: 5m }
        logging: { json: true }
        traces: { serviceName: reload-test }
        """.formatted(cloud.baseUrl(), GOLD, SILVER);
  }

  @BeforeEach
  void start() throws IOException {
    cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
    file = dir.resolve("gateway.yaml");
    Files.writeString(file, base());
    gateway = Gateway.start(ConfigLoader.withSystemEnvironment().load(file), FakeClock.at("2026-11-10T10:00:00Z"),
        file);
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    cloud.stop();
  }

  /** What a row expects after the reload. */
  @FunctionalInterface
  interface Expectation {
    void check(ReloadBySectionTest test, ConfigReloader.Result result, LogCapture logs) throws Exception;
  }

  static Expectation restart(String key) {
    return (test, result, logs) -> {
      assertThat(result.ok()).isTrue();
      assertThat(result.restartNeeded()).containsExactly(key);
      assertThat(logs.lines()).anySatisfy(line -> assertThat(line).startsWith("WARN")
          .contains("take effect only after a restart").contains(key));
    };
  }

  static Expectation applies(Expectation behaviour) {
    return (test, result, logs) -> {
      assertThat(result.ok()).isTrue();
      assertThat(result.restartNeeded()).as("a key that applies is not reported").isEmpty();
      behaviour.check(test, result, logs);
    };
  }

  static Stream<Arguments> sections() {
    return Stream.of(
        row("keys: a new key works, a removed one is refused",
            "- { key: sk-silver-reload, team: web", "- { key: sk-silver-new, team: web",
            applies((t, r, l) -> {
              assertThat(t.chat("sk-silver-new", "hello").statusCode()).isEqualTo(200);
              assertThat(t.chat(SILVER, "hello").statusCode()).isEqualTo(401);
            })),
        row("admin.token: the new token opens the admin API, the old one no longer does",
            "token: admin-one", "token: admin-two",
            applies((t, r, l) -> {
              assertThat(t.get("/admin/status", "admin-two").statusCode()).isEqualTo(200);
              assertThat(t.get("/admin/status", "admin-one").statusCode()).isEqualTo(401);
            })),
        row("server.maxHops: 0 refuses a request that came through another Spillway",
            "maxHops: 1", "maxHops: 0",
            applies((t, r, l) -> {
              assertThat(t.chat(SILVER, "hello").statusCode()).isEqualTo(200);
              assertThat(t.chat(SILVER, "hello", "Via", "1.1 spillway").statusCode()).isEqualTo(508);
            })),
        row("server.idleTimeout needs a restart", "idleTimeout: 60s", "idleTimeout: 61s",
            restart("server.idleTimeout")),
        row("cloud needs a restart", "timeout: 5s }", "timeout: 6s }", restart("cloud")),
        row("local needs a restart", "keepWarmEvery: 15m", "keepWarmEvery: 14m", restart("local")),
        row("failover needs a restart", "capacityStreak: 3", "capacityStreak: 4", restart("failover")),
        row("quota.monthlyTokens shrinks the pools in place and keeps the month's usage",
            "monthlyTokens: 4000", "monthlyTokens: 1000",
            applies((t, r, l) -> {
              JsonNode silver = t.quota().get("pools").get("silver");
              assertThat(silver.get("limit").asLong()).isEqualTo(500);
              assertThat(silver.get("used").asLong()).as("usage before the reload").isEqualTo(19);
              HttpResponse<String> refused = t.chat(SILVER, "hello");
              assertThat(refused.statusCode()).isEqualTo(429);
              assertThat(refused.body()).contains("insufficient_quota");
            })),
        row("quota.tiers share moves a pool's limit, usage kept",
            "timezone: UTC", "timezone: UTC\n  tiers: { silver: { share: 0.25 } }",
            applies((t, r, l) -> {
              JsonNode silver = t.quota().get("pools").get("silver");
              assertThat(silver.get("limit").asLong()).isEqualTo(1000);
              assertThat(silver.get("share").asDouble()).isEqualTo(0.25);
              assertThat(silver.get("used").asLong()).isEqualTo(19);
            })),
        row("quota.tiers overdraft moves a pool's ceiling",
            "timezone: UTC", "timezone: UTC\n  tiers: { gold: { overdraft: 0.5 } }",
            applies((t, r, l) -> assertThat(t.quota().get("pools").get("gold").get("ceiling").asLong())
                .isEqualTo(1200))),
        row("quota.alertAt moves the bands", "alertAt: 0.8", "alertAt: 0.001",
            applies((t, r, l) -> assertThat(t.quota().get("pools").get("silver").get("band").asText())
                .isEqualTo("alert"))),
        row("quota.tiers rate limits apply to the next request",
            "timezone: UTC", "timezone: UTC\n  tiers: { silver: { requestsPerMinutePerTeam: 1 } }",
            applies((t, r, l) -> {
              assertThat(t.chat(SILVER, "hello").statusCode()).isEqualTo(200);
              HttpResponse<String> limited = t.chat(SILVER, "hello");
              assertThat(limited.statusCode()).isEqualTo(429);
              assertThat(limited.body()).contains("rate_limit_exceeded");
            })),
        row("quota.defaultMaxTokens changes the estimate", "defaultMaxTokens: 1024", "defaultMaxTokens: 4000",
            applies((t, r, l) -> {
              HttpResponse<String> refused = t.chat(SILVER, "hello");
              assertThat(refused.statusCode()).isEqualTo(429);
              assertThat(refused.body()).contains("insufficient_quota", "needs an estimated");
            })),
        row("quota.timezone moves the month boundary", "timezone: UTC", "timezone: Pacific/Auckland",
            applies((t, r, l) -> assertThat(t.quota().get("timezone").asText()).isEqualTo("Pacific/Auckland"))),
        row("quota.admission needs a restart", "timezone: UTC", "timezone: UTC\n  admission: { queueSize: 5 }",
            restart("quota.admission")),
        row("quota.flushInterval needs a restart", "flushInterval: 1s", "flushInterval: 2s",
            restart("quota.flushInterval")),
        row("shaping applies to the next request", "degrade: never", "degrade: always",
            applies((t, r, l) -> assertThat(t.chatWith(SILVER,
                "{\"model\":\"gpt-4o\",\"temperature\":0.9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .headers().firstValue("x-spillway-degraded")).hasValueSatisfying(v -> assertThat(v).contains("temperature")))),
        row("shaping.risk settings need a restart", "threshold: 0.65", "threshold: 0.5",
            restart("shaping.risk.threshold")),
        row("cache needs a restart", "ttl: 10m", "ttl: 5m", restart("cache")),
        row("store needs a restart", "store: memory", "store: embedded:./reload-test-data", restart("store")),
        row("metrics needs a restart", "capacityWindow: 5m", "capacityWindow: 6m", restart("metrics")),
        row("traces need a restart", "serviceName: reload-test", "serviceName: reload-test-2", restart("traces")),
        row("logging applies to the next request", "json: true", "json: false",
            applies((t, r, l) -> {
              t.chat(SILVER, "hello");
              await().atMost(Duration.ofSeconds(5)).untilAsserted(() ->
                  assertThat(l.accessLines()).last().asString().doesNotStartWith("{").contains("web"));
            })));
  }

  static Arguments row(String rule, String from, String to, Expectation expectation) {
    return Arguments.of(rule, from, to, expectation);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("sections")
  void eachSectionAppliesOnReloadOrIsNamedInRestartNeeded(String rule, String from, String to,
      Expectation expectation) throws Exception {
    assertThat(chat(SILVER, "hello").statusCode()).as("a request before the reload").isEqualTo(200);
    await().atMost(Duration.ofSeconds(5)).until(() -> quota().get("pools").get("silver").get("used").asLong() == 19);
    String changed = base().replace(from, to);
    assertThat(changed).as("the row changes the base config").isNotEqualTo(base());
    Files.writeString(file, changed);

    try (LogCapture logs = new LogCapture()) {
      ConfigReloader.Result result = gateway.reload();
      expectation.check(this, result, logs);
    }
  }

  HttpResponse<String> chat(String key, String content, String... headers) throws Exception {
    return chatWith(key, GatewayHarness.chatBody("gpt-4o", content, false), headers);
  }

  HttpResponse<String> chatWith(String key, String body, String... headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(gateway.baseUrl() + "/chat/completions"))
        .timeout(Duration.ofSeconds(20))
        .header("Authorization", "Bearer " + key)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (headers.length > 0) {
      request.headers(headers);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> get(String path, String bearer) throws Exception {
    String origin = gateway.baseUrl().substring(0, gateway.baseUrl().length() - "/v1".length());
    return http.send(HttpRequest.newBuilder(URI.create(origin + path)).header("Authorization", "Bearer " + bearer)
        .GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** {@code GET /admin/quota} with whichever admin token is in force. */
  JsonNode quota() throws Exception {
    HttpResponse<String> response = get("/admin/quota", "admin-one");
    if (response.statusCode() == 401) {
      response = get("/admin/quota", "admin-two");
    }
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return Json.parse(response.body());
  }
}
