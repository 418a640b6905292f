package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.any;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.core.json.Json;
import io.spillway.core.testing.JsonMutator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestReporter;

/**
 * A bounded fuzz run through the real front end, from fixed seeds: damaged JSON bodies from a real
 * HTTP client, and damaged raw HTTP from a socket. Every case gets an answer within a few seconds
 * that is either a success from the upstream or an OpenAI error body with a 4xx status; never a
 * 5xx, never a hang, never a leak, and the gateway serves normally afterwards.
 */
class FrontEndFuzzTest {
  static final Duration BUDGET = Duration.ofSeconds(18);
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    harness = GatewayHarness.start("""
        server:
          maxRequestSize: 64KiB
          maxHeaderSize: 8KiB
          requestReadTimeout: 500ms
        """);
    harness.cloud.stubFor(any(anyUrl()).willReturn(OpenAiStubs.chatCompletion("still serving")));
  }

  @AfterAll
  static void stop() {
    harness.close();
  }

  static final String[] PATHS = {"/v1/chat/completions", "/v1/completions", "/v1/responses"};
  static final String[] CONTENT_TYPES = {"application/json", "application/json; charset=utf-8", "text/plain",
      "application/x-ndjson", "application/json; charset=utf-16"};

  @Test
  void damagedBodiesAlwaysGetAnAnswerOrAClientError(TestReporter reporter) throws Exception {
    JsonMutator mutator = new JsonMutator(20261110L);
    List<HttpRequest> requests = new ArrayList<>();
    List<String> repros = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      byte[] body = mutator.next();
      String path = PATHS[mutator.random().nextInt(PATHS.length)];
      String contentType = CONTENT_TYPES[mutator.random().nextInt(4) == 0
          ? mutator.random().nextInt(CONTENT_TYPES.length) : 0];
      repros.add("case " + i + " " + path + " " + contentType + " " + HexFormat.of().formatHex(body));
      requests.add(HttpRequest.newBuilder(URI.create(harness.url(path)))
          .timeout(Duration.ofSeconds(10))
          .header("Authorization", "Bearer " + GOLD_KEY).header("Content-Type", contentType)
          .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build());
    }
    int cases = inBatches(requests.size(), i -> {
      HttpResponse<String> response = harness.send(requests.get(i));
      assertAcceptable(response.statusCode(), response.body(), repros.get(i));
    });
    reporter.publishEntry("cases", String.valueOf(cases));
    assertThat(cases).as("cases run within the budget").isGreaterThanOrEqualTo(200);
    assertHealthyAfterwards();
  }

  interface Case {
    void run(int index) throws Exception;
  }

  /** Runs cases eight at a time until all ran or half the time budget is spent; returns how many ran. */
  static int inBatches(int total, Case each) throws Exception {
    long deadline = System.nanoTime() + BUDGET.toNanos() / 2;
    int cases = 0;
    try (ExecutorService clients = Executors.newFixedThreadPool(8)) {
      for (int batch = 0; batch < total && System.nanoTime() < deadline; batch += 8) {
        List<Future<?>> running = new ArrayList<>();
        for (int i = batch; i < Math.min(total, batch + 8); i++) {
          int index = i;
          running.add(clients.submit(() -> {
            each.run(index);
            return null;
          }));
        }
        for (Future<?> future : running) {
          future.get();
          cases++;
        }
      }
    }
    return cases;
  }

  @Test
  void damagedRawRequestsAlwaysGetAnAnswerOrAClientError(TestReporter reporter) throws Exception {
    Random random = new Random(0x5eedL);
    JsonMutator bodies = new JsonMutator(7L);
    List<byte[]> inputs = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      inputs.add(damage(random, validRaw(random, bodies)));
    }
    int cases = inBatches(inputs.size(),
        i -> exchange(inputs.get(i), "raw case " + i + ": " + new String(inputs.get(i), StandardCharsets.ISO_8859_1)));
    reporter.publishEntry("cases", String.valueOf(cases));
    assertThat(cases).as("cases run within the budget").isGreaterThanOrEqualTo(80);
    assertHealthyAfterwards();
  }

  private static void exchange(byte[] input, String repro) throws IOException {
    try (RawHttp connection = new RawHttp(harness.gateway().port())) {
      connection.timeout(10_000);
      try {
        connection.send(input);
      } catch (IOException closedWhileSending) {
        // the gateway answered (413, 431, 400) and closed before everything was sent
      }
      RawHttp.Answer answer;
      try {
        answer = connection.read();
      } catch (java.net.SocketTimeoutException hang) {
        throw new AssertionError("no answer within 10 s (a hang) for " + repro, hang);
      }
      assertAcceptable(answer.status(), answer.body(), repro);
    }
  }

  static void assertAcceptable(int status, String body, String repro) throws IOException {
    assertThat(status).as(repro).isLessThan(500);
    if (status < 400 && (body.startsWith("data:") || body.startsWith("event:"))) {
      // A body that asked for a stream: the stand-in's JSON answer, told as a stream.
      assertThat(body).as(repro).contains("still serving");
      return;
    }
    JsonNode json = Json.parse(body);
    assertThat(json).as(repro).isNotNull();
    if (status >= 400) {
      JsonNode error = json.get("error");
      assertThat(error).as(repro).isNotNull();
      assertThat(error.path("message").isTextual() && error.path("type").isTextual()).as(repro).isTrue();
    } else {
      assertThat(body).as(repro).contains("still serving");
    }
  }

  private static void assertHealthyAfterwards() {
    await().atMost(Duration.ofSeconds(10)).until(() -> harness.gateway().inFlightRequests() == 0);
    UpstreamFaultsTest.assertOthersAreServed(harness);
  }

  private static byte[] validRaw(Random random, JsonMutator bodies) {
    byte[] body = random.nextBoolean() ? bodies.next()
        : JsonMutator.CORPUS.get(random.nextInt(JsonMutator.CORPUS.size())).getBytes(StandardCharsets.UTF_8);
    String path = PATHS[random.nextInt(PATHS.length)];
    String head = "POST " + path + " HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer " + GOLD_KEY
        + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + body.length + "\r\n\r\n";
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(head.getBytes(StandardCharsets.ISO_8859_1));
    out.writeBytes(body);
    return out.toByteArray();
  }

  private static final String[] TOKENS = {"\r\n", "\r", "\n", ":", " ", "\u0000", "\u00ff", "chunked",
      "Transfer-Encoding: chunked\r\n", "Content-Length: 99999\r\n", "Content-Length: -1\r\n",
      "Expect: 100-continue\r\n", "HTTP/1.0", "HTTP/2.0", "GET", "/../admin", "%00", "\t", "0\r\n\r\n"};

  /** Damages the head more often than the body: that is where the framing lives. */
  private static byte[] damage(Random random, byte[] raw) {
    String text = new String(raw, StandardCharsets.ISO_8859_1);
    int headEnd = Math.max(1, text.indexOf("\r\n\r\n") + 4);
    int edits = 1 + random.nextInt(3);
    for (int e = 0; e < edits; e++) {
      int limit = random.nextInt(4) == 0 ? text.length() : Math.min(text.length(), headEnd);
      int at = random.nextInt(Math.max(1, limit));
      text = switch (random.nextInt(4)) {
        case 0 -> text.substring(0, at) + TOKENS[random.nextInt(TOKENS.length)] + text.substring(at);
        case 1 -> text.substring(0, at) + text.substring(Math.min(text.length(), at + 1 + random.nextInt(6)));
        case 2 -> text.substring(0, at) + (char) random.nextInt(256) + text.substring(Math.min(text.length(), at + 1));
        default -> text.substring(0, at) + text.substring(at, Math.min(text.length(), at + 12))
            + text.substring(at);
      };
    }
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }
}
