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
import io.spillway.config.GatewayConfig;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigReloadTest {
  static final String OLD_KEY = "sk-team-old";
  static final String NEW_KEY = "sk-team-new";

  @TempDir Path dir;
  Path file;
  WireMockServer cloud;
  Gateway gateway;

  @BeforeEach
  void start() throws IOException {
    cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
    file = dir.resolve("gateway.yaml");
    Files.writeString(file, config(OLD_KEY, "gold"));
    GatewayConfig config = ConfigLoader.withSystemEnvironment().load(file);
    gateway = Gateway.start(config, FakeClock.at("2026-11-10T10:00:00Z"), file);
  }

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    cloud.stop();
  }

  String config(String key, String tier) {
    return """
        server: { host: 127.0.0.1, port: 0, drainTimeout: 2s }
        admin: { token: %s }
        cloud: { baseUrl: "%s/v1", apiKey: sk-cloud, timeout: 5s }
        keys:
          - { key: %s, team: platform, tier: %s }
        store: memory
        """.formatted(GatewayHarness.ADMIN_TOKEN, cloud.baseUrl(), key, tier);
  }

  /** One keep-alive connection: every request goes over the same socket. */
  static final class Connection implements AutoCloseable {
    final Socket socket;
    final InputStream in;
    final OutputStream out;

    Connection(int port) throws IOException {
      socket = new Socket("127.0.0.1", port);
      socket.setSoTimeout(10_000);
      in = socket.getInputStream();
      out = socket.getOutputStream();
    }

    /** Returns {status, body, lower-cased head}. */
    String[] send(String method, String path, String bearer, String body) throws IOException {
      byte[] payload = body.getBytes(StandardCharsets.UTF_8);
      String head = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + bearer
          + "\r\nContent-Type: application/json\r\nContent-Length: " + payload.length + "\r\n\r\n";
      out.write(head.getBytes(StandardCharsets.US_ASCII));
      out.write(payload);
      out.flush();
      StringBuilder response = new StringBuilder();
      while (!response.toString().endsWith("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          throw new IOException("connection dropped");
        }
        response.append((char) b);
      }
      int length = 0;
      for (String line : response.toString().split("\r\n")) {
        if (line.toLowerCase().startsWith("content-length:")) {
          length = Integer.parseInt(line.substring(15).trim());
        }
      }
      assertThat(response.toString()).doesNotContainIgnoringCase("connection: close");
      return new String[] {response.substring(9, 12), new String(in.readNBytes(length), StandardCharsets.UTF_8),
          response.toString().toLowerCase()};
    }

    /** The response head, lower-cased, for header checks. */
    String sendFull(String method, String path, String bearer, String body) throws IOException {
      return send(method, path, bearer, body)[2];
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  static String chat() {
    return GatewayHarness.chatBody("gpt-4o", "hello", false);
  }

  @Test
  void reloadSwapsKeysOnAnOpenConnectionWithoutDroppingIt() throws IOException {
    try (Connection connection = new Connection(gateway.port())) {
      assertThat(connection.send("POST", "/v1/chat/completions", OLD_KEY, chat())[0]).isEqualTo("200");
      assertThat(connection.send("POST", "/v1/chat/completions", NEW_KEY, chat())[0]).isEqualTo("401");

      Files.writeString(file, config(NEW_KEY, "silver"));
      String[] reload = connection.send("POST", "/admin/reload", GatewayHarness.ADMIN_TOKEN, "");

      assertThat(reload[0]).isEqualTo("200");
      assertThat(Json.parse(reload[1]).get("ok").asBoolean()).isTrue();
      assertThat(connection.send("POST", "/v1/chat/completions", NEW_KEY, chat())[0]).isEqualTo("200");
      assertThat(connection.send("POST", "/v1/chat/completions", OLD_KEY, chat())[0]).isEqualTo("401");
      String keys = connection.send("GET", "/admin/keys", GatewayHarness.ADMIN_TOKEN, "")[1];
      assertThat(Json.parse(keys).get("keys").get(0).get("tier").asText()).isEqualTo("silver");
    }
  }

  @Test
  void anInvalidConfigIsRejectedWithOneClearLineAndTheOldOneStays() throws IOException {
    try (LogCapture logs = new LogCapture(); Connection connection = new Connection(gateway.port())) {
      Files.writeString(file, config(NEW_KEY, "platinum"));

      String[] reload = connection.send("POST", "/admin/reload", GatewayHarness.ADMIN_TOKEN, "");

      assertThat(reload[0]).isEqualTo("400");
      JsonNode body = Json.parse(reload[1]);
      assertThat(body.get("ok").asBoolean()).isFalse();
      assertThat(body.get("error").asText()).contains(file.toString(), "keys[0].tier", "platinum");
      assertThat(logs.lines()).filteredOn(line -> line.startsWith("ERROR"))
          .singleElement().asString().contains("config reload rejected, keeping the running config", "keys[0].tier");
      assertThat(connection.send("POST", "/v1/chat/completions", OLD_KEY, chat())[0]).isEqualTo("200");
      assertThat(connection.send("POST", "/v1/chat/completions", NEW_KEY, chat())[0]).isEqualTo("401");
    }
  }

  @Test
  void unreadableYamlIsRejectedToo() throws IOException {
    Files.writeString(file, "keys: [ {key: x, team: a, tier: gold\n");

    ConfigReloader.Result result = gateway.reload();

    assertThat(result.ok()).isFalse();
    assertThat(result.error()).contains("not valid YAML");
  }

  @Test
  void reloadablesGetTheNewConfigAndSectionsNobodyAppliesAreReported() throws IOException {
    List<GatewayConfig> seen = new CopyOnWriteArrayList<>();
    gateway.onReload(seen::add, "quota");
    Files.writeString(file, config(NEW_KEY, "gold").replace("drainTimeout: 2s", "drainTimeout: 3s")
        + "quota: { monthlyTokens: 1234 }\nshaping: { degrade: never }\n");

    ConfigReloader.Result result = gateway.reload();

    assertThat(result.ok()).isTrue();
    assertThat(result.restartNeeded()).as("changed keys no component applies").containsExactly("server.drainTimeout");
    assertThat(seen).singleElement().satisfies(c -> assertThat(c.quota().monthlyTokens()).isEqualTo(1234));
  }

  @Test
  void aFailingReloadableIsReportedAndTheOthersStillReload() throws IOException {
    List<GatewayConfig> seen = new CopyOnWriteArrayList<>();
    gateway.onReload(next -> {
      throw new IllegalStateException("broken component");
    });
    gateway.onReload(seen::add);
    Files.writeString(file, config(NEW_KEY, "gold"));

    try (LogCapture logs = new LogCapture()) {
      ConfigReloader.Result result = gateway.reload();
      assertThat(result.ok()).isFalse();
      assertThat(result.failed()).hasSize(1);
    }
    assertThat(seen).hasSize(1);
  }

  @Test
  void sighupReloadsTheConfig() throws IOException {
    Files.writeString(file, config(NEW_KEY, "gold"));
    HangupSignal handler = HangupSignal.install(gateway::reload);
    org.junit.jupiter.api.Assumptions.assumeTrue(handler != null, "SIGHUP cannot be handled here (no HUP on this platform, or the build was started under nohup)");
    try (Connection connection = new Connection(gateway.port())) {
      sun.misc.Signal.raise(new sun.misc.Signal("HUP"));

      await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
          assertThat(connection.send("POST", "/v1/chat/completions", NEW_KEY, chat())[0]).isEqualTo("200"));
    } finally {
      handler.close();
    }
  }

  @Test
  void revokingATeamsKeyDropsItsCachedAnswers() throws IOException {
    String deterministic = "{\"model\":\"gpt-4o\",\"temperature\":0,\"messages\":[{\"role\":\"user\",\"content\":\"lint\"}]}";
    try (Connection connection = new Connection(gateway.port())) {
      connection.send("POST", "/v1/chat/completions", OLD_KEY, deterministic);
      assertThat(connection.sendFull("POST", "/v1/chat/completions", OLD_KEY, deterministic)).contains("x-spillway-cache: hit");

      Files.writeString(file, config(NEW_KEY, "gold"));
      assertThat(gateway.reload().ok()).isTrue();

      assertThat(connection.sendFull("POST", "/v1/chat/completions", NEW_KEY, deterministic)).contains("x-spillway-cache: miss");
    }
  }

  @Test
  void reloadAppliesNewRateLimits() throws IOException {
    try (Connection connection = new Connection(gateway.port())) {
      Files.writeString(file, config(OLD_KEY, "silver") + "quota:\n  tiers:\n    silver: { requestsPerMinutePerTeam: 1 }\n");
      assertThat(gateway.reload().ok()).isTrue();

      assertThat(connection.send("POST", "/v1/chat/completions", OLD_KEY, chat())[0]).isEqualTo("200");
      assertThat(connection.send("POST", "/v1/chat/completions", OLD_KEY, chat())[0]).isEqualTo("429");
    }
  }

  @Test
  void reloadAppliesNewShaping() throws IOException {
    String hot = "{\"model\":\"gpt-4o\",\"temperature\":0.9,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    try (Connection connection = new Connection(gateway.port())) {
      Files.writeString(file, config(OLD_KEY, "bronze") + "shaping:\n  degrade: never\n");
      assertThat(gateway.reload().ok()).isTrue();
      assertThat(connection.sendFull("POST", "/v1/chat/completions", OLD_KEY, hot)).doesNotContain("x-spillway-degraded");

      Files.writeString(file, config(OLD_KEY, "bronze") + "shaping:\n  degrade: always\n");
      assertThat(gateway.reload().ok()).isTrue();
      assertThat(connection.sendFull("POST", "/v1/chat/completions", OLD_KEY, hot)).contains("x-spillway-degraded: ")
          .contains("temperature");
    }
  }

  @Test
  void aGatewayStartedWithoutAFileRefusesToReload() {
    try (GatewayHarness harness = GatewayHarness.start()) {
      var response = harness.post("/admin/reload", GatewayHarness.ADMIN_TOKEN, "");
      assertThat(response.statusCode()).isEqualTo(400);
      assertThat(response.body()).contains("\"ok\":false", "without a config file");
    }
  }
}
