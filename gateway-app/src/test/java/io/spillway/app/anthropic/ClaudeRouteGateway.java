package io.spillway.app.anthropic;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.testing.GatewayHarness;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.params.provider.Arguments;

/**
 * The real gateway (a {@link GatewayHarness}) with a {@code claude} route of kind {@code anthropic} on
 * a WireMock stand-in, and, when asked, an {@code openai} route before it on another: the set-up the
 * Messages API tests share. Registered with {@code @RegisterExtension} it starts before each test
 * (or when the test calls {@link #start(String)}, after {@link #startedByTheTest()}) and closes after
 * it; closing closes the gateway and the stand-ins.
 */
final class ClaudeRouteGateway implements BeforeEachCallback, AfterEachCallback, AutoCloseable {
  /** The key the {@code claude} route sends upstream, unless a test names its own. */
  static final String ANTHROPIC_KEY = "sk-ant-route-secret";

  private final boolean withOpenAi;
  private final String anthropicKey;
  private final boolean startEachTest;
  /** The {@code openai} route's stand-in; {@code null} on a gateway with the {@code claude} route only. */
  WireMockServer openai;
  WireMockServer anthropic;
  GatewayHarness h;

  private ClaudeRouteGateway(boolean withOpenAi, String anthropicKey, boolean startEachTest) {
    this.withOpenAi = withOpenAi;
    this.anthropicKey = anthropicKey;
    this.startEachTest = startEachTest;
  }

  /** An {@code openai} route, then a {@code claude} route sending {@link #ANTHROPIC_KEY}. */
  static ClaudeRouteGateway withOpenAiRoute() {
    return new ClaudeRouteGateway(true, ANTHROPIC_KEY, true);
  }

  /** The {@code claude} route alone, sending {@link #ANTHROPIC_KEY}. */
  static ClaudeRouteGateway claudeOnly() {
    return claudeOnly(ANTHROPIC_KEY);
  }

  /** The {@code claude} route alone, sending {@code anthropicKey}. */
  static ClaudeRouteGateway claudeOnly(String anthropicKey) {
    return new ClaudeRouteGateway(false, anthropicKey, true);
  }

  /** The same gateway, not started before each test: the test starts it with its own extra config. */
  ClaudeRouteGateway startedByTheTest() {
    return new ClaudeRouteGateway(withOpenAi, anthropicKey, false);
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    if (startEachTest) {
      start("");
    }
  }

  @Override
  public void afterEach(ExtensionContext context) {
    close();
  }

  /** Starts the stand-ins and the gateway, its config the routes plus {@code extraYaml}. */
  ClaudeRouteGateway start(String extraYaml) {
    try {
      openai = withOpenAi ? standIn() : null;
      anthropic = standIn();
      String openaiRoute = openai == null ? "" : """
                - name: openai
                  kind: openai
                  baseUrl: %s/v1
                  apiKey: %s
            """.formatted(openai.baseUrl(), GatewayHarness.CLOUD_KEY);
      h = GatewayHarness.start("""
          cloud:
            baseUrl: null
            apiKey: null
            routes:
          %s    - name: claude
                kind: anthropic
                baseUrl: %s
                apiKey: %s
          """.formatted(openaiRoute, anthropic.baseUrl(), anthropicKey) + extraYaml);
      return this;
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  private static WireMockServer standIn() {
    WireMockServer server = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    server.start();
    return server;
  }

  /** A Messages request from {@code key}, with {@code headers} (name, value, …) added. */
  HttpResponse<String> messages(String key, String body, String... headers) {
    String[] all = new String[headers.length + 2];
    all[0] = "x-api-key";
    all[1] = key;
    System.arraycopy(headers, 0, all, 2, headers.length);
    return h.post("/v1/messages", null, body, all);
  }

  /** An operator forces the breaker open, as {@code POST /admin/breaker} does: requests go local. */
  static void forceBreakerOpen(GatewayHarness h) {
    HttpResponse<String> forced = h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"state\":\"open\"}")).build());
    assertThat(forced.statusCode()).as(forced.body()).isEqualTo(200);
  }

  /** Every tier's key, buffered ({@code false}) and streamed ({@code true}). */
  static Stream<Arguments> tiersAndModes() {
    List<Arguments> all = new ArrayList<>();
    for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
      all.add(Arguments.of(key, false));
      all.add(Arguments.of(key, true));
    }
    return all.stream();
  }

  @Override
  public void close() {
    try {
      if (h != null) {
        h.close();
      }
    } finally {
      stop(anthropic);
      stop(openai);
    }
  }

  private static void stop(WireMockServer server) {
    if (server != null) {
      server.stop();
    }
  }
}
