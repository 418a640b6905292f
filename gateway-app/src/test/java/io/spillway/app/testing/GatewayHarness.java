package io.spillway.app.testing;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import io.spillway.app.Gateway;
import io.spillway.config.ConfigLoader;
import io.spillway.config.GatewayConfig;
import io.spillway.core.testing.FakeClock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

/**
 * The real gateway on an ephemeral loopback port, in front of WireMock stand-ins for the cloud and
 * for Ollama, with a fake clock. Every integration test starts one of these.
 *
 * <pre>{@code
 * try (GatewayHarness h = GatewayHarness.start("failover:\n  capacityStreak: 2")) {
 *   h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("hi")));
 *   var answer = h.openAi(GatewayHarness.GOLD_KEY).chat().completions().create(...);
 * }
 * }</pre>
 */
public final class GatewayHarness implements AutoCloseable {
  public static final String GOLD_KEY = "sk-gold-team-key";
  public static final String SILVER_KEY = "sk-silver-team-key";
  public static final String BRONZE_KEY = "sk-bronze-team-key";
  public static final String ADMIN_TOKEN = "admin-secret-token";
  public static final String CLOUD_KEY = "sk-company-cloud-secret";

  public final WireMockServer cloud;
  public final WireMockServer ollama;
  public final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String extraYaml;
  private Gateway gateway;

  private GatewayHarness(String extraYaml) {
    this.extraYaml = extraYaml;
    cloud = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    ollama = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    cloud.start();
    ollama.start();
  }

  public static GatewayHarness start() {
    return start("");
  }

  /** Starts with the base test config deep-merged with {@code extraYaml}. */
  public static GatewayHarness start(String extraYaml) {
    GatewayHarness harness = new GatewayHarness(extraYaml);
    try {
      harness.gateway = Gateway.start(harness.config(), harness.clock);
    } catch (RuntimeException e) {
      harness.close();
      throw e;
    }
    return harness;
  }

  public String baseConfigYaml() {
    return """
        server:
          host: 127.0.0.1
          port: 0
          drainTimeout: 2s
        admin:
          token: %s
        cloud:
          baseUrl: %s/v1
          apiKey: %s
          timeout: 5s
        local:
          kind: ollama
          baseUrl: %s
          models:
            default: qwen2.5-coder:7b
            gpt-4o-mini: llama3.2:3b
        keys:
          - { key: %s, team: release, tier: gold }
          - { key: %s, team: web, tier: silver }
          - { key: %s, team: sandbox, tier: bronze }
        store: memory
        """.formatted(ADMIN_TOKEN, cloud.baseUrl(), CLOUD_KEY, ollama.baseUrl(), GOLD_KEY, SILVER_KEY, BRONZE_KEY);
  }

  public GatewayConfig config() {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test config", merge(baseConfigYaml(), extraYaml));
  }

  static String merge(String base, String extra) {
    try {
      YAMLMapper yaml = new YAMLMapper();
      JsonNode baseTree = yaml.readTree(base);
      JsonNode extraTree = extra == null || extra.isBlank() ? null : yaml.readTree(extra);
      if (extraTree != null) {
        deepMerge((ObjectNode) baseTree, extraTree);
      }
      return yaml.writeValueAsString(baseTree);
    } catch (IOException e) {
      throw new IllegalArgumentException("bad test YAML", e);
    }
  }

  private static void deepMerge(ObjectNode target, JsonNode source) {
    source.properties().forEach(field -> {
      JsonNode existing = target.get(field.getKey());
      if (existing instanceof ObjectNode existingObject && field.getValue().isObject()) {
        deepMerge(existingObject, field.getValue());
      } else {
        target.set(field.getKey(), field.getValue());
      }
    });
  }

  public Gateway gateway() {
    return gateway;
  }

  /** The gateway's OpenAI base URL, ending in {@code /v1}. */
  public String baseUrl() {
    return gateway.baseUrl();
  }

  public String url(String path) {
    return "http://127.0.0.1:" + gateway.port() + path;
  }

  /** The official OpenAI Java SDK pointed at the gateway, with retries off so tests see every answer. */
  public OpenAIClient openAi(String key) {
    return OpenAIOkHttpClient.builder()
        .baseUrl(baseUrl())
        .apiKey(key)
        .maxRetries(0)
        .timeout(Duration.ofSeconds(20))
        .build();
  }

  public HttpResponse<String> post(String path, String key, String json, String... headers) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url(path)))
        .timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json));
    if (key != null) {
      request.header("Authorization", "Bearer " + key);
    }
    if (headers.length > 0) {
      request.headers(headers);
    }
    return send(request.build());
  }

  public HttpResponse<String> get(String path, String key) {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url(path))).timeout(Duration.ofSeconds(20)).GET();
    if (key != null) {
      request.header("Authorization", "Bearer " + key);
    }
    return send(request.build());
  }

  public HttpResponse<String> send(HttpRequest request) {
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException("request to the gateway failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  public static String chatBody(String model, String content, boolean stream) {
    return "{\"model\":\"" + model + "\",\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":" + OpenAiStubs.quote(content) + "}]}";
  }

  @Override
  public void close() {
    if (gateway != null) {
      gateway.close();
    }
    cloud.stop();
    ollama.stop();
  }
}
