package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.core.json.Json;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * No request field or header can change where the gateway connects (no SSRF): whatever a client
 * puts in the model name, the headers or the request target, only the configured upstream is
 * contacted, on its configured path. A second server stands by as the would-be victim.
 */
class UpstreamTargetTest {
  static GatewayHarness harness;
  static WireMockServer elsewhere;

  @BeforeAll
  static void start() {
    elsewhere = new WireMockServer(wireMockConfig().dynamicPort().bindAddress("127.0.0.1"));
    elsewhere.start();
    elsewhere.stubFor(any(anyUrl()).willReturn(OpenAiStubs.chatCompletion("answered by the wrong host")));
    harness = GatewayHarness.start();
  }

  @AfterAll
  static void stop() {
    harness.close();
    elsewhere.stop();
  }

  @BeforeEach
  void reset() {
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("configured upstream")));
    harness.cloud.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(com.github.tomakehurst.wiremock.client.WireMock.containing("\"stream\":true"))
        .willReturn(OpenAiStubs.chatStream(false, "configured upstream")));
    elsewhere.resetRequests();
  }

  static String victim() {
    return "127.0.0.1:" + elsewhere.port();
  }

  static Stream<String> modelNames() {
    return Stream.of("http://%s/v1/chat/completions", "https://%s/", "gpt-4o@%s", "%s", "//%s/v1/models",
        "../../../v1/models", "gpt-4o/../../admin/status", "gpt-4o#@%s", "gpt-4o?x=http://%s",
        "gpt-4o%%2F..%%2F..%%2F%s", "file:///etc/passwd", "gopher://%s/_", "ollama://%s/qwen");
  }

  @ParameterizedTest(name = "model {0}")
  @MethodSource("modelNames")
  void modelNameNeverChangesWhereTheGatewayConnects(String template) throws Exception {
    String model = template.formatted(victim());
    for (boolean stream : new boolean[] {false, true}) {
      var response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody(model, "hi", stream));
      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat(response.body()).contains("configured upstream");
    }
    assertOnlyTheConfiguredUpstreamWasContacted(2);
    assertThat(harness.cloud.findAll(anyRequestedFor(anyUrl())))
        .allSatisfy(request -> assertThat(Json.parse(request.getBodyAsString()).get("model").asText()).isEqualTo(model));
  }

  static Stream<String> headerLines() {
    return Stream.of("Host: %s", "X-Forwarded-Host: %s", "Forwarded: for=1.2.3.4;host=%s;proto=http",
        "X-Forwarded-Proto: https", "X-Original-URL: http://%s/v1/chat/completions",
        "X-Rewrite-URL: http://%s/", "X-Forwarded-Server: %s", "X-Host: %s", "X-HTTP-Method-Override: GET",
        "Proxy-Connection: keep-alive", "Via: 1.1 %s", "Referer: http://%s/", "Origin: http://%s");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("headerLines")
  void headerNeverChangesWhereTheGatewayConnects(String template) throws Exception {
    String line = template.formatted(victim());
    String body = chatBody("gpt-4o", "hi", false);
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send("POST /v1/chat/completions HTTP/1.1\r\n"
          + (line.startsWith("Host:") ? "" : "Host: gateway\r\n") + line + "\r\n"
          + "Authorization: Bearer " + GOLD_KEY + "\r\nContent-Type: application/json\r\n"
          + "Content-Length: " + body.length() + "\r\n\r\n" + body);
      RawHttp.Answer answer = client.read();
      assertThat(answer.status()).as(answer.body()).isEqualTo(200);
      assertThat(answer.body()).contains("configured upstream");
    }
    assertOnlyTheConfiguredUpstreamWasContacted(1);
    String name = line.substring(0, line.indexOf(':'));
    String forwarded = harness.cloud.findAll(anyRequestedFor(anyUrl())).get(0).getHeader(name);
    if (name.equals("Via")) {
      assertThat(forwarded).as("Via is carried as data, with Spillway's entry appended")
          .isEqualTo(line.substring(5) + ", 1.1 spillway");
    } else if (!name.equals("Host")) {
      assertThat(forwarded).as("routing and proxy headers are not forwarded").isNull();
    }
  }

  static Stream<String> requestTargets() {
    return Stream.of("http://%s/v1/chat/completions", "HTTP://%s/v1/chat/completions",
        "https://%s/v1/chat/completions", "http://user:pass@%s/v1/chat/completions",
        "/v1/chat/completions?baseUrl=http://%s", "http://%s/v1/chat/completions?x=1#frag");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("requestTargets")
  void requestTargetNeverChangesWhereTheGatewayConnects(String template) throws Exception {
    String target = template.formatted(victim());
    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(RawHttp.post(target, GOLD_KEY, chatBody("gpt-4o", "hi", false)));
      RawHttp.Answer answer = client.read();
      assertThat(answer.status()).as(answer.body()).isIn(200, 404);
      assertThat(Json.parse(answer.body())).isNotNull();
    }
    elsewhere.verify(0, anyRequestedFor(anyUrl()));
    assertThat(harness.cloud.findAll(anyRequestedFor(anyUrl())))
        .allSatisfy(request -> assertThat(request.getUrl()).isEqualTo("/v1/chat/completions"));
  }

  private static void assertOnlyTheConfiguredUpstreamWasContacted(int expected) {
    elsewhere.verify(0, anyRequestedFor(anyUrl()));
    List<LoggedRequest> upstream = harness.cloud.findAll(anyRequestedFor(anyUrl()));
    assertThat(upstream).hasSize(expected);
    assertThat(upstream).allSatisfy(request -> {
      assertThat(request.getUrl()).isEqualTo("/v1/chat/completions");
      assertThat(request.getHeader("Host"))
          .isEqualTo(java.net.URI.create(harness.config().cloud().baseUrl()).getAuthority());
      assertThat(request.containsHeader("HTTP2-Settings")).as("hop-by-hop headers stay behind").isFalse();
    });
  }
}
