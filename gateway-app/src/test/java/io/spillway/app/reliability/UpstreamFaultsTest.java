package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.http.Fault;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LoopbackSockets;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.ScriptedUpstream;
import io.spillway.app.testing.ThreadCensus;
import io.spillway.core.json.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
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
 * Every way an upstream can fail reaches the client as a clear OpenAI error (or, once a stream has
 * started, a final error event), never as a hang, a truncated success or a leak, and the gateway
 * keeps serving everyone else meanwhile.
 */
class UpstreamFaultsTest {
  /** Small limits so faults show quickly; generous enough for a loaded CI machine. */
  /**
   * Small limits so faults show quickly, generous enough for a loaded CI machine. The local backend
   * is off: these tests are about what a cloud fault does when nothing can take over (failover
   * itself is tested with the router).
   */
  static String limits(String baseUrl) {
    return "cloud:\n  timeout: 5s\n  maxResponseSize: 256KiB\n"
        + (baseUrl != null ? "  baseUrl: " + baseUrl + "\n" : "")
        + "server:\n  streamTimeLimit: 8s\nlocal:\n  enabled: false\n";
  }
  static final String PROBE = "healthy-probe";

  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start(limits(null));
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("still serving")));
    assertOthersAreServed(harness); // warm the JVM so timeouts measure faults, not class loading
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  @BeforeEach
  void reset() {
    harness.cloud.resetAll();
    harness.cloud.stubFor(post("/v1/chat/completions").atPriority(1)
        .withRequestBody(containing(PROBE)).willReturn(OpenAiStubs.chatCompletion("still serving")));
  }

  /** Another client's ordinary request, answered normally (a gold key: no rate limit gets in the way). */
  static void assertOthersAreServed(GatewayHarness gateway) {
    HttpResponse<String> response =
        gateway.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", PROBE, false));
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(response.body()).contains("still serving");
  }

  static JsonNode openAiError(HttpResponse<String> response) throws IOException {
    assertThat(response.headers().firstValue("content-type")).hasValue("application/json");
    JsonNode error = Json.parse(response.body()).get("error");
    assertThat(error).as(response.body()).isNotNull();
    assertThat(error.has("message") && error.has("type") && error.has("param") && error.has("code")).isTrue();
    return error;
  }

  @Test
  void hangingUpstreamAnswers504AndLeaksNoConnectionOrThread() throws Exception {
    LoopbackSockets.assumeAvailable();
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("hang"))
        .willReturn(OpenAiStubs.chatCompletion("too late").withFixedDelay(12_000)));
    int baselineThreads = ThreadCensus.named("spillway-req-");

    List<CompletableFuture<HttpResponse<String>>> hanging = IntStream.range(0, 10)
        .mapToObj(i -> CompletableFuture.supplyAsync(
            () -> harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hang " + i, false))))
        .toList();
    await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().inFlightRequests() >= 10);
    assertOthersAreServed(harness);

    for (CompletableFuture<HttpResponse<String>> future : hanging) {
      HttpResponse<String> response = future.get();
      assertThat(response.statusCode()).isEqualTo(504);
      assertThat(openAiError(response).get("code").asText()).isEqualTo("upstream_timeout");
    }
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
      assertThat(harness.gateway().inFlightRequests()).isZero();
      // every timed-out upstream call closed its connection; at most the probe's pooled one is left
      assertThat(LoopbackSockets.establishedTo(harness.cloud.port())).isLessThanOrEqualTo(1);
      assertThat(ThreadCensus.named("spillway-req-")).isLessThanOrEqualTo(baselineThreads);
    });
    assertOthersAreServed(harness);
  }

  @Test
  void refusedConnectionAnswers502AndServiceResumesWhenTheUpstreamIsBack() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0)) {
      port = probe.getLocalPort();
    }
    try (GatewayHarness down = GatewayHarness.start(limits("http://127.0.0.1:" + port + "/v1"))) {
      HttpResponse<String> refused =
          down.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));
      assertThat(refused.statusCode()).isEqualTo(502);
      assertThat(openAiError(refused).get("code").asText()).isEqualTo("upstream_unreachable");

      WireMockServer back = new WireMockServer(wireMockConfig().port(port).bindAddress("127.0.0.1"));
      back.start();
      try {
        back.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("still serving")));
        assertOthersAreServed(down);
      } finally {
        back.stop();
      }
    }
  }

  static Stream<Arguments> resetsBeforeTheFirstByte() {
    return Stream.of(Fault.CONNECTION_RESET_BY_PEER, Fault.EMPTY_RESPONSE, Fault.RANDOM_DATA_THEN_CLOSE)
        .flatMap(fault -> Stream.of(Arguments.of(fault, false), Arguments.of(fault, true)));
  }

  @ParameterizedTest(name = "{0}, stream={1}")
  @MethodSource("resetsBeforeTheFirstByte")
  void resetBeforeTheFirstByteAnswers502(Fault fault, boolean stream) throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("broken"))
        .willReturn(aResponse().withFault(fault)));

    HttpResponse<String> response =
        harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "broken", stream));

    assertThat(response.statusCode()).isEqualTo(502);
    assertThat(openAiError(response).get("type").asText()).isEqualTo("server_error");
    assertThat(response.body()).doesNotContain(GatewayHarness.CLOUD_KEY);
    // the gateway made exactly one attempt: a POST that may have run is never silently repeated
    harness.cloud.verify(1, postRequestedFor(urlEqualTo("/v1/chat/completions")).withRequestBody(containing("broken")));
    assertOthersAreServed(harness);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"/v1/chat/completions", "/v1/responses"})
  void resetMidStreamEndsTheStreamWithAnErrorEventNeverASilentEnd(String path) throws Exception {
    boolean responses = path.equals("/v1/responses");
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          if (head.toLowerCase().contains("x-scenario: probe")) {
            byte[] body = OpenAiStubs.chatCompletionBody("still serving", 1, 1).getBytes(StandardCharsets.UTF_8);
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            return;
          }
          ScriptedUpstream.writeStreamHead(out);
          ScriptedUpstream.writeChunk(out, responses
              ? "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0}\n\n"
              : "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"}}]}\n\n");
          throw new ScriptedUpstream.Reset();
        });
        GatewayHarness gateway = GatewayHarness.start(limits(upstream.baseUrl()))) {
      String body = responses
          ? "{\"model\":\"gpt-4.1\",\"stream\":true,\"input\":\"hi\"}"
          : chatBody("gpt-4o", "hi", true);
      HttpResponse<String> response = gateway.send(HttpRequest.newBuilder(URI.create(gateway.url(path)))
          .header("Authorization", "Bearer " + GOLD_KEY).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body)).build());

      assertThat(response.statusCode()).isEqualTo(200);
      List<String> lines = response.body().lines().filter(line -> !line.isEmpty()).toList();
      assertThat(lines.get(responses ? 1 : 0)).contains(responses ? "response.created" : "partial");
      if (responses) {
        assertThat(lines.get(lines.size() - 2)).isEqualTo("event: error");
        assertThat(Json.parse(lines.get(lines.size() - 1).substring(6)).get("type").asText()).isEqualTo("error");
      } else {
        assertThat(lines.get(lines.size() - 2)).startsWith("data: {\"error\"");
        assertThat(lines.get(lines.size() - 1)).isEqualTo("data: [DONE]");
      }
      HttpResponse<String> probe = gateway.post("/v1/chat/completions", GOLD_KEY,
          chatBody("gpt-4o", PROBE, false), "X-Scenario", "probe");
      assertThat(probe.statusCode()).isEqualTo(200);
      assertThat(probe.body()).contains("still serving");
    }
  }

  @ParameterizedTest(name = "[{index}] {0}")
  @ValueSource(strings = {
      "<html><body>502 Bad Gateway</body></html>",
      "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[",
      "",
      "[1,2,3]",
      "{\"id\":\"a\"} {\"id\":\"b\"}",
      "null"})
  void successWithABodyThatIsNotOneJsonObjectAnswers502(String body) throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("garbled"))
        .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody(body)));

    HttpResponse<String> response =
        harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "garbled", false));

    assertThat(response.statusCode()).isEqualTo(502);
    assertThat(openAiError(response).get("code").asText()).isEqualTo("upstream_invalid_response");
    assertOthersAreServed(harness);
  }

  @Test
  void answerCutShortOfItsContentLengthAnswers502() throws Exception {
    try (ScriptedUpstream upstream = new ScriptedUpstream((head, out) -> {
          String full = OpenAiStubs.chatCompletionBody("cut", 1, 1);
          out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + full.length()
              + "\r\n\r\n" + full.substring(0, full.length() / 2)).getBytes(StandardCharsets.UTF_8));
          out.flush();
        });
        GatewayHarness gateway = GatewayHarness.start(limits(upstream.baseUrl()))) {
      HttpResponse<String> response = gateway.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", false));

      assertThat(response.statusCode()).isEqualTo(502);
      assertThat(openAiError(response).get("message").asText()).contains("broke off");
    }
  }

  /** What a load balancer or CDN in front of the upstream answers: its own HTML page. */
  @ParameterizedTest(name = "HTTP {0}")
  @ValueSource(ints = {413, 429})
  void errorWithoutAnOpenAiBodyKeepsItsStatusAndRetryAfterAndBecomesAnOpenAiError(int status) throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("html-error"))
        .willReturn(aResponse().withStatus(status).withHeader("Content-Type", "text/html")
            .withHeader("Retry-After", "7").withBody("<html><h1>" + status + " from the edge</h1></html>")));

    HttpResponse<String> response =
        harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "html-error", false));

    assertThat(response.statusCode()).isEqualTo(status);
    assertThat(response.headers().firstValue("retry-after")).hasValue("7");
    JsonNode error = openAiError(response);
    assertThat(error.get("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.get("message").asText()).contains("HTTP " + status);
    assertOthersAreServed(harness);
  }

  @Test
  void streamThatKeepsFlowingIsCutAtTheStreamTimeLimit() throws Exception {
    StringBuilder events = new StringBuilder();
    for (int i = 0; i < 300; i++) {
      events.append("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,")
          .append("\"delta\":{\"content\":\"tick ").append(i).append("\"}}]}\n\n");
    }
    assertStreamCutAtTimeLimit(events.toString());
  }

  @Test
  void streamOfOnlyKeepAliveCommentsTimesOutAsSilenceBeforeItsFirstEvent() throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("comments-only"))
        .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
            .withBody(": keep-alive\n\n".repeat(300)).withChunkedDribbleDelay(150, 60_000)));
    long started = System.nanoTime();

    HttpResponse<String> response =
        harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "comments-only", true));

    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
    assertThat(response.statusCode()).isEqualTo(504);
    assertThat(openAiError(response).get("code").asText()).isEqualTo("upstream_timeout");
    await().atMost(Duration.ofSeconds(5)).until(() -> harness.gateway().inFlightRequests() == 0);
    assertOthersAreServed(harness);
  }

  @Test
  void streamThatGoesQuietAfterItsFirstEventsEndsWithAnErrorEvent() throws Exception {
    String events = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,"
        + "\"delta\":{\"content\":\"early\"}}]}\n\n";
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("goes-quiet"))
        .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
            .withBody(events + ": keep-alive\n\n".repeat(300)).withChunkedDribbleDelay(150, 60_000)));
    List<String> lines = new ArrayList<>();
    try (BufferedReader reader = openStream(harness, chatBody("gpt-4o", "goes-quiet", true))) {
      reader.lines().filter(line -> !line.isEmpty()).forEach(lines::add);
    }

    assertThat(lines.get(0)).contains("early");
    JsonNode error = Json.parse(lines.get(lines.size() - 2).substring("data: ".length())).get("error");
    assertThat(error.get("code").asText()).isEqualTo("upstream_timeout");
    assertThat(lines.get(lines.size() - 1)).isEqualTo("data: [DONE]");
    await().atMost(Duration.ofSeconds(5)).until(() -> harness.gateway().inFlightRequests() == 0);
  }

  private void assertStreamCutAtTimeLimit(String endlessBody) throws Exception {
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("endless"))
        .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
            .withBody(endlessBody).withChunkedDribbleDelay(150, 60_000)));
    long started = System.nanoTime();
    List<String> lines = new ArrayList<>();
    CompletableFuture<Void> reading = CompletableFuture.runAsync(() -> {
      try (BufferedReader reader = openStream(harness, chatBody("gpt-4o", "endless", true))) {
        reader.lines().filter(line -> !line.isEmpty()).forEach(lines::add);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().inFlightRequests() >= 1);
    assertOthersAreServed(harness);
    reading.get();
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    assertThat(took).isLessThan(Duration.ofSeconds(30));
    assertThat(lines.get(0)).contains("tick 0");
    JsonNode error = Json.parse(lines.get(lines.size() - 2).substring("data: ".length())).get("error");
    assertThat(error.get("code").asText()).isEqualTo("stream_time_limit");
    assertThat(lines.get(lines.size() - 1)).isEqualTo("data: [DONE]");
    await().atMost(Duration.ofSeconds(5)).until(() -> harness.gateway().inFlightRequests() == 0);
  }

  @ParameterizedTest(name = "chunked={0}")
  @ValueSource(booleans = {false, true})
  void answerLargerThanMaxResponseSizeAnswers502(boolean chunked) throws Exception {
    String huge = OpenAiStubs.chatCompletionBody("x".repeat(1024 * 1024), 1, 1);
    var stub = aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody(huge);
    harness.cloud.stubFor(post("/v1/chat/completions").withRequestBody(containing("huge"))
        .willReturn(chunked ? stub.withChunkedDribbleDelay(8, 200) : stub));

    HttpResponse<String> response = harness.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "huge", false));

    assertThat(response.statusCode()).isEqualTo(502);
    JsonNode error = openAiError(response);
    assertThat(error.get("code").asText()).isEqualTo("upstream_invalid_response");
    assertThat(error.get("message").asText()).contains("maxResponseSize");
    assertOthersAreServed(harness);
  }

  static BufferedReader openStream(GatewayHarness gateway, String body) throws Exception {
    HttpResponse<InputStream> response = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(gateway.url("/v1/chat/completions")))
            .header("Authorization", "Bearer " + GOLD_KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertThat(response.statusCode()).isEqualTo(200);
    return new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
  }
}
