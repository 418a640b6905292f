package io.spillway.app.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.observe.AccessLog;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.LogCapture;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.TricklingUpstream;
import io.spillway.core.json.Json;
import java.io.BufferedReader;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An upstream that sends one byte at a time is never idle, so a read timeout never fires; the
 * backend's timeout still bounds the wait for the whole head and for each whole event. Each
 * stand-in here would take 20 s or more to finish what it trickles; the timeout is 2 s.
 */
class TricklingUpstreamTest {
  private static final Duration TICK = Duration.ofMillis(100);
  private static final Duration TIMEOUT = Duration.ofSeconds(2);
  /** Far below what the trickle would take, far above the timeout: no tight timing is asserted. */
  private static final Duration PROMPTLY = Duration.ofSeconds(12);

  private static final String CHUNK = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,"
      + "\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"early\"},\"finish_reason\":null}]}\n\n";
  /** Over 200 bytes of one event: 20 s at a byte per tick. */
  private static final String SLOW_EVENT = "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{"
      + "\"index\":0,\"delta\":{\"content\":\"" + "x".repeat(200) + "\"}}]}\n\n";

  private static GatewayHarness gateway(TricklingUpstream upstream) {
    return GatewayHarness.start("cloud:\n  baseUrl: " + upstream.baseUrl() + "\n  timeout: " + TIMEOUT.toSeconds()
        + "s\nlocal:\n  enabled: false\n");
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {true, false})
  void headSentOneByteAtATimeIsCutAtTheCloudTimeout(boolean stream) throws Exception {
    String head = "HTTP/1.1 200 OK\r\n" + "X-Padding: trickle\r\n".repeat(12)
        + "Content-Type: text/event-stream\r\n\r\n";
    try (TricklingUpstream upstream = new TricklingUpstream(head + CHUNK + "data: [DONE]\n\n", 1, TICK);
        GatewayHarness h = gateway(upstream)) {
      long started = System.nanoTime();

      HttpResponse<String> answer = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", stream));

      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(PROMPTLY);
      assertThat(answer.statusCode()).isEqualTo(504);
      assertThat(UpstreamFaultsTest.openAiError(answer).get("code").asText()).isEqualTo("upstream_timeout");
      ScriptedAwait.closed(upstream);
      await().atMost(Duration.ofSeconds(5)).until(() -> h.gateway().inFlightRequests() == 0);
    }
  }

  @Test
  void firstEventSentOneByteAtATimeIsCutAtTheCloudTimeout() throws Exception {
    String answer = TricklingUpstream.streamAnswer(SLOW_EVENT + "data: [DONE]\n\n");
    try (TricklingUpstream upstream = new TricklingUpstream(answer, answer.indexOf("data:") + 1, TICK);
        GatewayHarness h = gateway(upstream)) {
      long started = System.nanoTime();

      HttpResponse<String> response = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true));

      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(PROMPTLY);
      assertThat(response.statusCode()).isEqualTo(504);
      assertThat(UpstreamFaultsTest.openAiError(response).get("code").asText()).isEqualTo("upstream_timeout");
      ScriptedAwait.closed(upstream);
    }
  }

  @Test
  void laterEventSentOneByteAtATimeEndsTheStreamWithATimeoutErrorEvent() throws Exception {
    String answer = TricklingUpstream.streamAnswer(CHUNK + SLOW_EVENT + "data: [DONE]\n\n");
    try (TricklingUpstream upstream = new TricklingUpstream(answer, answer.indexOf(SLOW_EVENT) + 1, TICK);
        GatewayHarness h = gateway(upstream)) {
      long started = System.nanoTime();
      List<String> lines = new ArrayList<>();
      try (BufferedReader reader = UpstreamFaultsTest.openStream(h, chatBody("gpt-4o", "hi", true))) {
        reader.lines().filter(line -> !line.isEmpty()).forEach(lines::add);
      }

      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(PROMPTLY);
      assertThat(lines.get(0)).contains("early");
      JsonNode error = Json.parse(lines.get(lines.size() - 2).substring("data: ".length())).get("error");
      assertThat(error.get("code").asText()).isEqualTo("upstream_timeout");
      assertThat(lines.get(lines.size() - 1)).isEqualTo("data: [DONE]");
      ScriptedAwait.closed(upstream);
    }
  }

  @Test
  void localOllamaSendingItsFirstLineOneByteAtATimeIsCutAtTheLocalTimeout() throws Exception {
    String answer = "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\n\r\n"
        + "{\"model\":\"qwen2.5-coder:7b\",\"created_at\":\"2026-11-10T10:00:00Z\",\"message\":{\"role\":\"assistant\","
        + "\"content\":\"" + "y".repeat(200) + "\"},\"done\":false}\n";
    try (TricklingUpstream ollama = new TricklingUpstream(answer, answer.indexOf("\r\n\r\n") + 5, TICK);
        GatewayHarness h = GatewayHarness.start("local:\n  baseUrl: " + ollama.rootUrl() + "\n  timeout: "
            + TIMEOUT.toSeconds() + "s\n")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      long started = System.nanoTime();

      HttpResponse<String> response = h.post("/v1/chat/completions", GOLD_KEY, chatBody("gpt-4o", "hi", true));

      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(PROMPTLY);
      assertThat(response.statusCode()).isGreaterThanOrEqualTo(500);
      UpstreamFaultsTest.openAiError(response);
      assertThat(ollama.requests.get()).isPositive();
      ScriptedAwait.closed(ollama);
    }
  }

  @Test
  void streamCutAtTheStreamTimeLimitIsLoggedAsTheGatewaysOwnCut() throws Exception {
    List<String> logged;
    try (LogCapture logs = new LogCapture();
        GatewayHarness h = GatewayHarness.start("server:\n  streamTimeLimit: 3s\nlocal:\n  enabled: false\n")) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
          .withHeader("Content-Type", "text/event-stream")
          .withBody(CHUNK.repeat(300)).withChunkedDribbleDelay(300, 60_000)));
      List<String> lines = new ArrayList<>();
      try (BufferedReader reader = UpstreamFaultsTest.openStream(h, chatBody("gpt-4o", "hi", true))) {
        reader.lines().filter(line -> !line.isEmpty()).forEach(lines::add);
      }
      JsonNode error = Json.parse(lines.get(lines.size() - 2).substring("data: ".length())).get("error");
      assertThat(error.get("code").asText()).isEqualTo("stream_time_limit");
      await().atMost(Duration.ofSeconds(20)).until(() -> h.gateway().inFlightRequests() == 0
          && logs.lines().stream().anyMatch(line -> line.contains(AccessLog.LOGGER)));
      logged = logs.lines();
    }

    List<String> access = logged.stream().filter(line -> line.contains(AccessLog.LOGGER)).toList();
    assertThat(access).hasSize(1);
    assertThat(access.get(0)).contains("\"error\":\"stream_time_limit\"").doesNotContain("client_closed");
  }

  /** Waits (bounded) until the gateway has closed the stand-in's connection. */
  private static final class ScriptedAwait {
    static void closed(TricklingUpstream upstream) throws InterruptedException {
      assertThat(upstream.cutByTheGateway.await(10, java.util.concurrent.TimeUnit.SECONDS))
          .as("the gateway closed the upstream connection").isTrue();
    }
  }
}
