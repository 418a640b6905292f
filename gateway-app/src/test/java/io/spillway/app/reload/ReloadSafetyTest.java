package io.spillway.app.reload;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.Gateway;
import io.spillway.app.admin.AuditLog;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LogCapture;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.config.ConfigLoader;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A reload that would lock everyone out is refused and the running config keeps serving; every
 * reload, by the admin API or by SIGHUP, leaves an audit line saying who and what changed; reloaded
 * admin settings are applied, or reported as needing a restart, truthfully.
 */
class ReloadSafetyTest {
  static final String GOLD = "sk-gold-safety";
  static final String SILVER = "sk-silver-safety";
  static final String BRONZE = "sk-bronze-safety";
  static final Instant NOW = Instant.parse("2026-11-10T10:00:00Z");

  @TempDir Path dir;
  Path file;
  WireMockServer cloud;
  Gateway gateway;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  String config(String token, String overlap, String keySync) {
    return """
        server: { host: 127.0.0.1, port: 0, drainTimeout: 2s }
        admin: { token: %s, rotationOverlap: %s, keySyncInterval: %s }
        cloud: { baseUrl: "%s/v1", apiKey: sk-cloud, timeout: 5s }
        local: { enabled: false }
        keys:
          - { key: %s, team: release, tier: gold }
          - { key: %s, team: web, tier: silver }
          - { key: %s, team: sandbox, tier: bronze }
        store: memory
        """.formatted(token, overlap, keySync, cloud.baseUrl(), GOLD, SILVER, BRONZE);
  }

  @BeforeEach
  void start() throws Exception {
    cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
    file = dir.resolve("gateway.yaml");
    Files.writeString(file, config("admin-one", "1h", "250ms"));
    gateway = Gateway.start(ConfigLoader.withSystemEnvironment().load(file), FakeClock.at(NOW.toString()), file);
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    cloud.stop();
  }

  HttpResponse<String> send(String method, String path, String bearer, String body) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + path))
        .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + bearer)
        .header("Content-Type", "application/json")
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  int chat(String key) throws Exception {
    return send("POST", "/v1/chat/completions", key, GatewayHarness.chatBody("gpt-4o", "hi", false)).statusCode();
  }

  static String fingerprint(String token) throws Exception {
    byte[] digest = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    return "admin-token:" + HexFormat.of().formatHex(digest, 0, 4);
  }

  static List<JsonNode> auditLines(LogCapture logs, String action) {
    return logs.lines().stream().filter(line -> line.contains(" " + AuditLog.LOGGER + " "))
        .map(line -> line.substring(line.indexOf('{')))
        .map(json -> {
          try {
            return Json.parse(json);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        })
        .filter(line -> line.get("action").asText().equals(action)).toList();
  }

  void assertStillServing() throws Exception {
    for (String key : List.of(GOLD, SILVER, BRONZE)) {
      assertThat(chat(key)).as(key).isEqualTo(200);
    }
    assertThat(send("GET", "/admin/keys", "admin-one", null).statusCode()).isEqualTo(200);
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @ValueSource(strings = {"", "\n\n# only a comment\n", "server: { host: 127.0.0.1, port: 0 }\nkeys:\n",
      "server: { host: 127.0.0.1, port: 0 }\ncloud: { baseUrl: \"http://127.0.0.1:9/v1\" }\nadmin: { token: \"\" }\n"})
  void aConfigThatWouldLockEveryoneOutIsRefusedAndTheRunningOneKeepsServing(String written) throws Exception {
    Files.writeString(file, written);
    try (LogCapture logs = new LogCapture()) {
      HttpResponse<String> answer = send("POST", "/admin/reload", "admin-one", null);

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
      JsonNode body = Json.parse(answer.body());
      assertThat(body.get("ok").asBoolean()).isFalse();
      assertThat(body.get("error").asText()).containsAnyOf("is empty", "no keys and no admin.token");
      JsonNode audited = auditLines(logs, "config.reload").getFirst();
      assertThat(audited.get("ok").asBoolean()).isFalse();
      assertThat(audited.get("applied").asBoolean()).isFalse();
      assertThat(audited.get("who").asText()).isEqualTo(fingerprint("admin-one"));
    }
    assertStillServing();
  }

  @Test
  void aReloadedRotationOverlapIsTheOneRotationsUse() throws Exception {
    JsonNode created = Json.parse(send("POST", "/admin/keys", "admin-one", "{\"team\":\"ci\",\"tier\":\"silver\"}").body());
    Files.writeString(file, config("admin-one", "5m", "250ms"));

    assertThat(gateway.reload().restartNeeded()).doesNotContain("admin.rotationOverlap", "admin");
    HttpResponse<String> rotated = send("POST", "/admin/keys/" + created.get("id").asText() + "/rotate", "admin-one", null);

    assertThat(rotated.statusCode()).as(rotated.body()).isEqualTo(200);
    assertThat(Instant.parse(Json.parse(rotated.body()).get("previousKeyValidUntil").asText()))
        .isEqualTo(NOW.plus(Duration.ofMinutes(5)));
  }

  @Test
  void aReloadedKeySyncIntervalIsReportedAsNeedingARestart() throws Exception {
    Files.writeString(file, config("admin-one", "1h", "2s"));

    assertThat(gateway.reload().restartNeeded()).containsExactly("admin.keySyncInterval");
  }

  @Test
  void theAuditLogNamesTheTokenThatAskedAndThenTheNewOne() throws Exception {
    Files.writeString(file, config("admin-two", "1h", "250ms"));
    try (LogCapture logs = new LogCapture()) {
      assertThat(send("POST", "/admin/reload", "admin-one", null).statusCode()).isEqualTo(200);
      assertThat(send("POST", "/admin/keys", "admin-two", "{\"team\":\"ci\",\"tier\":\"bronze\"}").statusCode())
          .isEqualTo(200);

      JsonNode reload = auditLines(logs, "config.reload").getFirst();
      assertThat(reload.get("who").asText()).isEqualTo(fingerprint("admin-one"));
      assertThat(reload.get("changed").toString()).contains("admin.token").doesNotContain("admin-two");
      assertThat(auditLines(logs, "key.create").getFirst().get("who").asText()).isEqualTo(fingerprint("admin-two"));
    }
  }

  @Test
  void aReloadBySighupIsAuditedWithWhatChanged() throws Exception {
    Files.writeString(file, config("admin-one", "1h", "250ms").replace("port: 0,", "port: 0, maxHops: 2,"));
    try (LogCapture logs = new LogCapture();
        HangupSignal hangup = HangupSignal.install(gateway::reloadBySignal)) {
      org.junit.jupiter.api.Assumptions.assumeTrue(hangup != null,
          "SIGHUP cannot be handled here (no HUP on this platform, or the build was started under nohup)");
      Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(ProcessHandle.current().pid())).start();
      assertThat(kill.waitFor()).isZero();

      await().atMost(Duration.ofSeconds(30)).until(() -> !auditLines(logs, "config.reload").isEmpty());
      JsonNode line = auditLines(logs, "config.reload").getFirst();
      assertThat(line.get("who").asText()).isEqualTo("signal:SIGHUP");
      assertThat(line.get("ok").asBoolean()).isTrue();
      assertThat(line.get("changed").toString()).contains("server.maxHops");
    }
  }
}
