package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.core.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input of every kind gets a clear OpenAI-style error, reaches no upstream, and does not
 * disturb anyone else's request running at the same time.
 */
class BadInputTest {
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start("server:\n  maxRequestSize: 64KiB\n  maxHeaderSize: 8KiB");
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void reset() {
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("still serving")));
    harness.cloud.stubFor(post("/v1/completions").willReturn(OpenAiStubs.completion("ok")));
    harness.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.response("ok")));
    harness.cloud.stubFor(get("/v1/models").willReturn(OpenAiStubs.models("gpt-4o")));
  }

  record Case(String name, String path, String contentType, byte[] body, int status, String code, String param) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Case chat(String name, String json, int status, String code, String param) {
    return new Case(name, "/v1/chat/completions", "application/json", json.getBytes(StandardCharsets.UTF_8),
        status, code, param);
  }

  static String withField(String field, String value) {
    return "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"" + field + "\":" + value + "}";
  }

  static byte[] bytes(String before, int[] raw, String after) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(before.getBytes(StandardCharsets.UTF_8));
    for (int b : raw) {
      out.write(b);
    }
    out.writeBytes(after.getBytes(StandardCharsets.UTF_8));
    return out.toByteArray();
  }

  static Stream<Case> badBodies() {
    String prefix = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"";
    return Stream.of(
        chat("body over the limit", chatBody("gpt-4o", "x".repeat(100_000), false), 413, "request_too_large", null),
        chat("deeply nested JSON", "{\"model\":\"gpt-4o\",\"messages\":[" + "[".repeat(5_000) + "]".repeat(5_000) + "]}",
            400, "invalid_json", null),
        new Case("invalid UTF-8", "/v1/chat/completions", "application/json", bytes(prefix, new int[] {0xC3, 0x28}, "\"}]}"),
            400, "invalid_json", null),
        new Case("overlong UTF-8", "/v1/chat/completions", "application/json", bytes(prefix, new int[] {0xC0, 0xAF}, "\"}]}"),
            400, "invalid_json", null),
        new Case("UTF-8 encoded surrogate", "/v1/chat/completions", "application/json",
            bytes(prefix, new int[] {0xED, 0xA0, 0x80}, "\"}]}"), 400, "invalid_json", null),
        new Case("UTF-16 body", "/v1/chat/completions", "application/json",
            chatBody("gpt-4o", "hi", false).getBytes(StandardCharsets.UTF_16LE), 400, "invalid_json", null),
        new Case("text/plain", "/v1/chat/completions", "text/plain",
            chatBody("gpt-4o", "hi", false).getBytes(StandardCharsets.UTF_8), 415, "unsupported_media_type", null),
        new Case("form encoded", "/v1/chat/completions", "application/x-www-form-urlencoded",
            "model=gpt-4o".getBytes(StandardCharsets.UTF_8), 415, "unsupported_media_type", null),
        new Case("application/jsonp", "/v1/chat/completions", "application/jsonp",
            chatBody("gpt-4o", "hi", false).getBytes(StandardCharsets.UTF_8), 415, "unsupported_media_type", null),
        new Case("JSON in Latin-1", "/v1/chat/completions", "application/json; charset=iso-8859-1",
            chatBody("gpt-4o", "hi", false).getBytes(StandardCharsets.UTF_8), 415, "unsupported_media_type", null),
        chat("array instead of object", "[1,2,3]", 400, null, null),
        chat("string instead of object", "\"hello\"", 400, null, null),
        chat("number instead of object", "42", 400, null, null),
        chat("null instead of object", "null", 400, null, null),
        chat("empty body", "", 400, "invalid_json", null),
        chat("trailing garbage", chatBody("gpt-4o", "hi", false) + " {}", 400, "invalid_json", null),
        chat("duplicate key", "{\"model\":\"gpt-4o\",\"model\":\"o3\",\"messages\":[]}", 400, "invalid_json", null),
        chat("number with 5000 digits", withField("seed", "1".repeat(5_000)), 400, "invalid_json", null),
        chat("model is a number", "{\"model\":4,\"messages\":[]}", 400, null, "model"),
        chat("model with a newline", "{\"model\":\"gpt-4o\\nINFO admin logged in\",\"messages\":[]}", 400, null, "model"),
        chat("model missing", "{\"messages\":[]}", 400, "missing_required_parameter", "model"),
        chat("stream is a string", withField("stream", "\"yes\""), 400, null, "stream"),
        chat("messages is a string", "{\"model\":\"gpt-4o\",\"messages\":\"hi\"}", 400, null, "messages"),
        chat("message is a number", "{\"model\":\"gpt-4o\",\"messages\":[1]}", 400, null, "messages.[0]"),
        chat("message without role", "{\"model\":\"gpt-4o\",\"messages\":[{\"content\":\"hi\"}]}", 400, null,
            "messages.[0].role"),
        chat("content is an object", "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":{\"a\":1}}]}",
            400, null, "messages.[0].content"),
        chat("temperature is a string", withField("temperature", "\"hot\""), 400, null, "temperature"),
        chat("top_p out of range", withField("top_p", "5"), 400, null, "top_p"),
        chat("n is zero", withField("n", "0"), 400, null, "n"),
        chat("max_tokens negative", withField("max_tokens", "-1"), 400, null, "max_tokens"),
        chat("max_tokens zero", withField("max_tokens", "0"), 400, null, "max_tokens"),
        chat("max_tokens absurd", withField("max_tokens", "1000000000000"), 400, null, "max_tokens"),
        chat("max_tokens beyond long", withField("max_tokens", "99999999999999999999999"), 400, null, "max_tokens"),
        chat("max_tokens fractional", withField("max_tokens", "1.5"), 400, null, "max_tokens"),
        chat("max_tokens as a string", withField("max_tokens", "\"100\""), 400, null, "max_tokens"),
        chat("max_tokens 1e400", withField("max_tokens", "1e400"), 400, null, "max_tokens"),
        chat("max_completion_tokens negative", withField("max_completion_tokens", "-5"), 400, null,
            "max_completion_tokens"),
        new Case("prompt is a number", "/v1/completions", "application/json",
            "{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":5}".getBytes(StandardCharsets.UTF_8), 400, null, "prompt"),
        new Case("input is an object", "/v1/responses", "application/json",
            "{\"model\":\"gpt-4.1\",\"input\":{}}".getBytes(StandardCharsets.UTF_8), 400, null, "input"),
        new Case("max_output_tokens negative", "/v1/responses", "application/json",
            "{\"model\":\"gpt-4.1\",\"input\":\"hi\",\"max_output_tokens\":-5}".getBytes(StandardCharsets.UTF_8),
            400, null, "max_output_tokens"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badBodies")
  void badBodyGetsAnOpenAiErrorAndOthersAreServedMeanwhile(Case bad) throws Exception {
    CompletableFuture<HttpResponse<String>> answer = CompletableFuture.supplyAsync(() -> harness.send(
        HttpRequest.newBuilder(URI.create(harness.url(bad.path())))
            .header("Authorization", "Bearer " + GOLD_KEY)
            .header("Content-Type", bad.contentType())
            .POST(HttpRequest.BodyPublishers.ofByteArray(bad.body())).build()));
    UpstreamFaultsTest.assertOthersAreServed(harness);
    HttpResponse<String> response = answer.get();

    assertThat(response.statusCode()).as(response.body()).isEqualTo(bad.status());
    JsonNode error = UpstreamFaultsTest.openAiError(response);
    assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
    if (bad.code() != null) {
      assertThat(error.get("code").asText()).isEqualTo(bad.code());
    }
    if (bad.param() != null) {
      assertThat(error.get("param").asText()).isEqualTo(bad.param());
    }
    assertThat(upstreamRequests()).as("only the probe reached the upstream").hasSize(1);
  }

  @Test
  void bodyOverTheLimitGets413EvenWhileTheClientIsStillUploading() throws Exception {
    byte[] megabyte = "x".repeat(1024 * 1024).getBytes(StandardCharsets.US_ASCII);
    for (int attempt = 0; attempt < 10; attempt++) {
      // a real client: it keeps sending its 1 MiB body while the gateway already answers
      HttpResponse<String> response = harness.send(HttpRequest.newBuilder(URI.create(harness.url("/v1/chat/completions")))
          .header("Authorization", "Bearer " + GOLD_KEY).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofByteArray(megabyte)).build());
      assertThat(response.statusCode()).as("attempt " + attempt).isEqualTo(413);
      assertThat(UpstreamFaultsTest.openAiError(response).get("code").asText()).isEqualTo("request_too_large");
    }
    try (RawHttp raw = new RawHttp(harness.gateway().port())) {
      raw.send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Content-Length: " + (8 * megabyte.length) + "\r\n\r\n");
      CompletableFuture<Void> uploading = CompletableFuture.runAsync(() -> {
        try {
          for (int i = 0; i < 8; i++) {
            raw.send(megabyte);
          }
        } catch (IOException stoppedByTheGateway) {
          // expected once the gateway has answered and closed
        }
      });
      RawHttp.Answer answer = raw.read();
      assertThat(answer.status()).isEqualTo(413);
      assertThat(answer.header("connection")).isEqualTo("close");
      uploading.join();
    }
    assertThat(upstreamRequests()).isEmpty();
    UpstreamFaultsTest.assertOthersAreServed(harness);
  }

  @Test
  void unknownModelGetsTheUpstreams404AsAnOpenAiError() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("gpt-9"))
        .willReturn(OpenAiStubs.invalidModel()));

    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-9", "hi", false));

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(UpstreamFaultsTest.openAiError(response).get("code").asText()).isEqualTo("model_not_found");
    UpstreamFaultsTest.assertOthersAreServed(harness);
  }

  @Test
  void hugeHeadersGet431AndTheConnectionIsClosed() throws Exception {
    try (RawHttp raw = new RawHttp(harness.gateway().port())) {
      raw.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false),
          "X-Big: " + "a".repeat(16_000)));
      RawHttp.Answer answer = raw.read();
      assertThat(answer.status()).isEqualTo(431);
      assertThat(Json.parse(answer.body()).get("error").get("code").asText()).isEqualTo("request_header_fields_too_large");
      assertThat(raw.closedByPeer()).isTrue();
    }
    assertThat(upstreamRequests()).isEmpty();
    UpstreamFaultsTest.assertOthersAreServed(harness);
  }

  @Test
  void overlongRequestLineGets414() throws Exception {
    try (RawHttp raw = new RawHttp(harness.gateway().port())) {
      raw.send("GET /v1/models?" + "q".repeat(10_000) + " HTTP/1.1\r\nHost: x\r\n\r\n");
      RawHttp.Answer answer = raw.read();
      assertThat(answer.status()).isEqualTo(414);
      assertThat(Json.parse(answer.body()).get("error")).isNotNull();
    }
    UpstreamFaultsTest.assertOthersAreServed(harness);
  }

  /** Header lines a client might use to smuggle a second header (or request) into what is forwarded. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"bare CR", "NUL", "control character", "space in name", "LF without CR"})
  void headerInjectionIsRejectedWith400AndNothingReachesTheUpstream(String kind) throws Exception {
    String line = switch (kind) {
      case "bare CR" -> "X-Note: a\rX-Injected: yes";
      case "NUL" -> "X-Note: a\u0000X-Injected: yes";
      case "control character" -> "X-Note: a\u0001b";
      case "space in name" -> "X Injected: yes";
      default -> "X-Note: a\nX-Injected: yes";
    };
    try (RawHttp raw = new RawHttp(harness.gateway().port())) {
      raw.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "inject", false), line));
      RawHttp.Answer answer = raw.read();
      assertThat(answer.status()).isEqualTo(400);
      assertThat(Json.parse(answer.body()).get("error").get("type").asText()).isEqualTo("invalid_request_error");
      assertThat(raw.closedByPeer()).isTrue();
    }
    assertThat(upstreamRequests()).isEmpty();
    UpstreamFaultsTest.assertOthersAreServed(harness);
  }

  @Test
  void foldedHeaderReachesTheUpstreamAsOneValueNeverAsASecondHeader() throws Exception {
    try (RawHttp raw = new RawHttp(harness.gateway().port())) {
      raw.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "fold", false),
          "X-Note: a\r\n X-Injected: yes"));
      assertThat(raw.read().status()).isEqualTo(200);
    }
    LoggedRequest upstream = upstreamRequests().get(0);
    assertThat(upstream.getHeader("X-Note")).isEqualTo("a X-Injected: yes");
    assertThat(upstream.containsHeader("X-Injected")).isFalse();
  }

  @Test
  void headerValueThatIsNotAsciiIsServedButNotForwarded() throws Exception {
    try (RawHttp raw = new RawHttp(harness.gateway().port())) {
      raw.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "latin", false),
          "X-Note: caf\u00e9", "X-Plain: ascii"));
      RawHttp.Answer answer = raw.read();
      assertThat(answer.status()).as(answer.body()).isEqualTo(200);
    }
    LoggedRequest upstream = upstreamRequests().get(0);
    assertThat(upstream.containsHeader("X-Note")).isFalse();
    assertThat(upstream.getHeader("X-Plain")).isEqualTo("ascii");
  }

  @Test
  void clientRequestIdThatIsNotSafeIsReplacedNotEchoed() {
    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false),
        "x-request-id", "<script>alert(1)</script>");
    assertThat(response.headers().firstValue("x-request-id")).hasValueSatisfying(id -> assertThat(id).startsWith("req_"));
    assertThat(upstreamRequests().get(0).getHeader("X-Client-Request-ID")).startsWith("req_");
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {
      "/admin/../v1/models", "/%61dmin/status", "//admin/status", "/admin/%2e%2e/", "/admin/%2e%2e/v1/models",
      "/admin/./status", "/ADMIN/status", "/admin%2fstatus", "/v1/../admin/status", "/admin/status/..",
      "/admin\\..\\v1\\models", "/admin;/status", "/v1/models/../../admin/status", "/admin/status%00"})
  void pathTricksNeverReachAdminWithoutTheTokenNorTheUpstream(String path) throws Exception {
    for (String token : new String[] {null, GOLD_KEY, ADMIN_TOKEN}) {
      try (RawHttp raw = new RawHttp(harness.gateway().port())) {
        raw.send("GET " + path + " HTTP/1.1\r\nHost: gateway\r\n"
            + (token != null ? "Authorization: Bearer " + token + "\r\n" : "") + "\r\n");
        RawHttp.Answer answer = raw.read();
        assertThat(answer.status()).as(path + " with " + token).isIn(400, 401, 404);
        if (token == null || token.equals(GOLD_KEY)) {
          assertThat(answer.status()).as("nothing under /admin without the admin token").isNotEqualTo(200);
        }
        assertThat(Json.parse(answer.body()).get("error")).isNotNull();
      }
    }
    harness.cloud.verify(0, anyRequestedFor(anyUrl()));
  }

  @Test
  void adminNeedsTheAdminTokenNotAGatewayKey() throws Exception {
    assertThat(harness.get("/admin/status", null).statusCode()).isEqualTo(401);
    assertThat(harness.get("/admin/status", GOLD_KEY).statusCode()).isEqualTo(401);
    assertThat(harness.get("/admin/status", ADMIN_TOKEN + "x").statusCode()).isEqualTo(401);
    assertThat(harness.get("/admin/status", ADMIN_TOKEN).statusCode()).isNotEqualTo(401);
  }

  @Test
  void adminIsAbsentWhenNoTokenIsConfigured() throws Exception {
    try (GatewayHarness open = GatewayHarness.start("admin:\n  token: ''")) {
      HttpResponse<String> response = open.get("/admin/status", ADMIN_TOKEN);
      assertThat(response.statusCode()).isEqualTo(404);
      assertThat(UpstreamFaultsTest.openAiError(response).get("code").asText()).isEqualTo("unknown_url");
    }
  }

  static Stream<Arguments> smuggling() {
    String smuggled = "GET /admin/status HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + ADMIN_TOKEN + "\r\n\r\n";
    return Stream.of(
        Arguments.of("Content-Length and Transfer-Encoding",
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + GOLD_KEY
                + "\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "0\r\n\r\n" + smuggled),
        Arguments.of("duplicate Content-Length",
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + GOLD_KEY
                + "\r\nContent-Type: application/json\r\nContent-Length: 0\r\nContent-Length: " + smuggled.length()
                + "\r\n\r\n" + smuggled),
        Arguments.of("Content-Length list",
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 0, 5\r\n\r\n" + smuggled),
        Arguments.of("obfuscated Transfer-Encoding",
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n" + smuggled),
        Arguments.of("Transfer-Encoding in HTTP/1.0",
            "POST /v1/chat/completions HTTP/1.0\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "0\r\n\r\n" + smuggled),
        Arguments.of("space before colon",
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\nContent-Length: 5\r\n\r\n"
                + "0\r\n\r\n" + smuggled));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("smuggling")
  void ambiguousFramingGets400AndTheConnectionIsClosedBeforeASmuggledRequest(String kind, String raw) throws Exception {
    try (RawHttp connection = new RawHttp(harness.gateway().port())) {
      connection.send(raw);
      RawHttp.Answer answer = connection.read();
      assertThat(answer.status()).isEqualTo(400);
      assertThat(Json.parse(answer.body()).get("error")).isNotNull();
      assertThat(answer.header("connection")).isEqualTo("close");
      assertThat(connection.closedByPeer()).as("no second answer: the smuggled request is never served").isTrue();
    }
    assertThat(upstreamRequests()).isEmpty();
    UpstreamFaultsTest.assertOthersAreServed(harness);
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrderEvenWhenTheFirstIsSlower() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("first"))
        .willReturn(OpenAiStubs.chatCompletion("answer one").withFixedDelay(1_500)));
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("second"))
        .willReturn(OpenAiStubs.chatCompletion("answer two")));
    try (RawHttp connection = new RawHttp(harness.gateway().port())) {
      connection.send(RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "first", false))
          + RawHttp.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "second", false)));
      RawHttp.Answer one = connection.read();
      RawHttp.Answer two = connection.read();
      assertThat(one.body()).contains("answer one");
      assertThat(two.body()).contains("answer two");
    }
  }

  @Test
  void absoluteFormTargetIsServedByTheConfiguredUpstreamOnly() throws Exception {
    try (RawHttp connection = new RawHttp(harness.gateway().port())) {
      connection.send(RawHttp.post("http://evil.example:8080/v1/chat/completions", GOLD_KEY,
          chatBody("gpt-4o", "absolute", false)));
      assertThat(connection.read().status()).isEqualTo(200);
    }
    harness.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/chat/completions")));
  }

  private static List<LoggedRequest> upstreamRequests() {
    return harness.cloud.findAll(anyRequestedFor(anyUrl()));
  }
}
