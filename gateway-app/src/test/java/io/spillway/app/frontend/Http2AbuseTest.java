package io.spillway.app.frontend;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.GOLD_KEY;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawH2;
import io.spillway.core.json.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 abuse, frame by frame over a real socket to the real gateway: resets the client provokes
 * from the server ("MadeYouReset") and its own resets spend one budget, unfinished uploads are
 * bounded per connection and overall, a connection that only PINGs is idle, and one connection's
 * many streams get a share of the requests served, not all of them.
 */
class Http2AbuseTest {
  private static final String CHAT = "/v1/chat/completions";
  private static final byte[] BODY = chatBody("gpt-4o", "hi", false).getBytes(StandardCharsets.UTF_8);

  /** A full request, then a zero WINDOW_UPDATE on its stream: the server resets the stream itself. */
  private static void madeYouReset(RawH2 h2, int streamId) throws Exception {
    h2.post(streamId, CHAT, GOLD_KEY, BODY, true);
    h2.windowUpdate(streamId, 0);
  }

  private static boolean calmedDown(RawH2 h2) {
    RawH2.Frame goAway = h2.first(f -> f.type() == RawH2.GOAWAY);
    return goAway != null && goAway.errorCode() == RawH2.ENHANCE_YOUR_CALM && h2.closed();
  }

  @Test
  void resetsTheServerIsMadeToSendEndTheConnectionWithEnhanceYourCalm() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("server:\n  http2:\n    maxResetsPerWindow: 10\n");
        RawH2 h2 = new RawH2(harness.gateway().port())) {
      harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("slow").withFixedDelay(3_000)));
      for (int i = 0; i < 30 && !h2.closed(); i++) {
        madeYouReset(h2, 1 + 2 * i);
      }
      await().atMost(RawH2.PATIENCE).until(() -> calmedDown(h2));
      assertThat(h2.frames()).filteredOn(f -> f.type() == RawH2.RST_STREAM).hasSizeGreaterThanOrEqualTo(10);
    }
  }

  @Test
  void clientResetsAndResetsItProvokesShareOneBudget() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("server:\n  http2:\n    maxResetsPerWindow: 10\n");
        RawH2 h2 = new RawH2(harness.gateway().port())) {
      harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("slow").withFixedDelay(3_000)));
      int stream = 1;
      for (int i = 0; i < 6; i++, stream += 2) { // six resets by the client (under Netty's own guard)
        h2.post(stream, CHAT, GOLD_KEY, BODY, true);
        h2.reset(stream, RawH2.CANCEL);
      }
      for (int i = 0; i < 6 && !h2.closed(); i++, stream += 2) { // six provoked from the server
        madeYouReset(h2, stream);
      }
      await().atMost(RawH2.PATIENCE).until(() -> calmedDown(h2));
    }
  }

  @Test
  void aConnectionWithinItsResetBudgetIsServedOn() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("server:\n  http2:\n    maxResetsPerWindow: 10\n");
        RawH2 h2 = new RawH2(harness.gateway().port())) {
      harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("still served")));
      int stream = 1;
      for (int i = 0; i < 4; i++, stream += 4) { // eight resets of ten
        madeYouReset(h2, stream);
        h2.post(stream + 2, CHAT, GOLD_KEY, BODY, true);
        h2.reset(stream + 2, RawH2.CANCEL);
      }
      int last = stream;
      h2.post(last, CHAT, GOLD_KEY, BODY, true);
      await().atMost(RawH2.PATIENCE).until(() -> h2.answer(last) != null || h2.closed());
      assertThat(h2.answer(last).status()).isEqualTo(200);
      assertThat(h2.first(f -> f.type() == RawH2.GOAWAY)).isNull();
    }
  }

  @Test
  void aConnectionThatOnlyPingsIsClosedAtTheIdleTimeout() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("server:\n  idleTimeout: 500ms\n");
        RawH2 h2 = new RawH2(harness.gateway().port())) {
      await().atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(100)).until(h2::pingOrClosed);
      assertThat(h2.frames()).anyMatch(f -> f.type() == RawH2.PING && (f.flags() & 0x1) != 0);
      await().atMost(RawH2.PATIENCE).until(() -> harness.gateway().openConnections() == 0);
    }
  }

  private static final String UPLOAD_LIMITS = """
      server:
        maxRequestSize: 64KiB
        maxPendingBodyBytes: %s
        http2:
          initialWindowSize: 1MiB
          maxPendingBodyBytesPerConnection: %s
      """;

  /** A 40 KiB body whose stream stays open: HEADERS and DATA without END_STREAM. */
  private static byte[] unfinishedUpload(RawH2 h2, int streamId) throws Exception {
    byte[] body = ("{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\""
        + "x".repeat(40 * 1024) + "\"}]}").getBytes(StandardCharsets.UTF_8);
    h2.headers(streamId, false, "POST", CHAT, "authorization", "Bearer " + GOLD_KEY,
        "content-type", "application/json", "content-length", Integer.toString(body.length));
    h2.data(streamId, java.util.Arrays.copyOf(body, body.length - 10), false);
    return java.util.Arrays.copyOfRange(body, body.length - 10, body.length);
  }

  private static void assertTooManyPendingUploads(RawH2 h2, int streamId) throws Exception {
    await().atMost(RawH2.PATIENCE).until(() -> h2.answer(streamId) != null || h2.closed());
    RawH2.Frame answer = h2.answer(streamId);
    assertThat(answer.status()).isEqualTo(503);
    assertThat(answer.headers().get("retry-after")).hasToString("1");
    await().atMost(RawH2.PATIENCE).until(() -> h2.first(f -> f.type() == RawH2.DATA && f.streamId() == streamId) != null);
    String body = new String(h2.first(f -> f.type() == RawH2.DATA && f.streamId() == streamId).payload(),
        StandardCharsets.UTF_8);
    assertThat(Json.parse(body).get("error").get("code").asText()).isEqualTo("too_many_pending_uploads");
  }

  @Test
  void unfinishedUploadsPastTheConnectionsBudgetAreRefusedAndAnEndedOneFreesItsShare() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start(UPLOAD_LIMITS.formatted("64MiB", "100KiB"));
        RawH2 h2 = new RawH2(harness.gateway().port())) {
      harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("uploaded")));
      byte[] rest1 = unfinishedUpload(h2, 1);
      unfinishedUpload(h2, 3); // 80 KiB held
      unfinishedUpload(h2, 5); // 120 KiB: over 100 KiB
      assertTooManyPendingUploads(h2, 5);
      assertThat(h2.answer(1)).isNull();

      h2.data(1, rest1, true); // stream 1's body ends: its 40 KiB leave the budget
      await().atMost(RawH2.PATIENCE).until(() -> h2.answer(1) != null);
      assertThat(h2.answer(1).status()).isEqualTo(200);
      byte[] rest7 = unfinishedUpload(h2, 7);
      h2.data(7, rest7, true);
      await().atMost(RawH2.PATIENCE).until(() -> h2.answer(7) != null);
      assertThat(h2.answer(7).status()).isEqualTo(200);
      assertThat(h2.closed()).isFalse();
    }
  }

  @Test
  void unfinishedUploadsAcrossConnectionsArePastTheGatewaysBudgetRefused() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start(UPLOAD_LIMITS.formatted("100KiB", "64MiB"));
        RawH2 first = new RawH2(harness.gateway().port());
        RawH2 second = new RawH2(harness.gateway().port())) {
      unfinishedUpload(first, 1);
      unfinishedUpload(second, 1);
      await().atMost(RawH2.PATIENCE).until(() -> harness.gateway().pendingBodyBytes() >= 80 * 1024 - 20);
      unfinishedUpload(second, 3); // 120 KiB across the two: over 100 KiB
      assertTooManyPendingUploads(second, 3);
      assertThat(first.answer(1)).isNull();
      assertThat(second.answer(1)).isNull();
    }
  }

  @Test
  void oneConnectionsStreamsAreServedOnlyUpToItsShareAndOthersAreServedMeanwhile() throws Exception {
    try (GatewayHarness harness = GatewayHarness.start("server:\n  http2:\n    maxInFlightPerConnection: 2\n");
        RawH2 greedy = new RawH2(harness.gateway().port());
        RawH2 other = new RawH2(harness.gateway().port())) {
      harness.cloud.stubFor(post(CHAT).willReturn(OpenAiStubs.chatCompletion("served").withFixedDelay(2_000)));
      for (int stream = 1; stream <= 7; stream += 2) {
        greedy.post(stream, CHAT, GOLD_KEY, BODY, true);
      }
      await().atMost(RawH2.PATIENCE).until(() -> harness.gateway().inFlightRequests() >= 2);
      other.post(1, CHAT, GOLD_KEY, BODY, true);
      await().atMost(RawH2.PATIENCE).until(() -> harness.gateway().inFlightRequests() >= 3);
      assertThat(harness.gateway().inFlightRequests()).isEqualTo(3);

      await().atMost(Duration.ofSeconds(20)).until(() -> other.answer(1) != null
          && greedy.answer(1) != null && greedy.answer(3) != null && greedy.answer(5) != null
          && greedy.answer(7) != null);
      for (int stream = 1; stream <= 7; stream += 2) {
        assertThat(greedy.answer(stream).status()).isEqualTo(200);
      }
      assertThat(other.answer(1).status()).isEqualTo(200);
    }
  }
}
