package io.spillway.app.reliability;

import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.HoldingUpstream;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.app.testing.RawHttp;
import io.spillway.core.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A client that goes away cancels its upstream call, streamed or not, whatever its tier: the
 * upstream sees its connection closed long before {@code cloud.timeout}, and the caller's quota
 * reservation settles for what was used: nothing for an answer that never came, the prompt and the
 * text streamed so far for a stream cut off mid-way (never the whole reservation).
 */
class UpstreamCancellationTest {
  static HoldingUpstream upstream;
  static GatewayHarness harness;

  @BeforeAll
  static void start() throws IOException {
    upstream = stallingUpstream();
    harness = GatewayHarness.start("""
        cloud:
          baseUrl: %s
          timeout: 60s
        """.formatted(upstream.baseUrl()));
  }

  @AfterAll
  static void stop() throws IOException {
    harness.close();
    upstream.close();
  }

  @ParameterizedTest(name = "{0} key, stream={1}")
  @CsvSource({
    "gold, false", "gold, true",
    "silver, false", "silver, true",
    "bronze, false", "bronze, true"})
  void aClientThatGoesAwayCancelsTheUpstreamCallAndSettlesForWhatWasUsed(String tier, boolean stream)
      throws Exception {
    String key = switch (tier) {
      case "gold" -> GatewayHarness.GOLD_KEY;
      case "silver" -> GatewayHarness.SILVER_KEY;
      default -> GatewayHarness.BRONZE_KEY;
    };
    long usedBefore = pool(tier).path("used").asLong();
    int closedBefore = upstream.closedWhileHeld.get();
    int requestsBefore = upstream.requests.get();
    long reservedWhileRunning;

    try (RawHttp client = new RawHttp(harness.gateway().port())) {
      client.send(RawHttp.post("/v1/chat/completions", key, chatBody("gpt-4o", "who waits for this " + tier, stream)));
      await().until(() -> upstream.requests.get() > requestsBefore);
      reservedWhileRunning = pool(tier).path("reserved").asLong();
      assertThat(reservedWhileRunning).as("the estimate is held while the call runs").isPositive();
      if (stream) {
        assertThat(client.readHead().status()).isEqualTo(200);
        readUntil(client.input(), "world");
      }
    }

    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(upstream.closedWhileHeld.get())
        .as("the upstream sees its connection closed at once, not after cloud.timeout").isGreaterThan(closedBefore));
    await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(pool(tier).path("reserved").asLong())
        .as("the reservation has ended").isZero());
    long charged = pool(tier).path("used").asLong() - usedBefore;
    if (stream) {
      assertThat(charged).as("the prompt and the text streamed before the client left")
          .isPositive().isLessThan(reservedWhileRunning);
    } else {
      assertThat(charged).as("no answer came: nothing is charged").isZero();
    }
  }

  private static JsonNode pool(String tier) throws IOException {
    return Json.parse(harness.get("/admin/quota", ADMIN_TOKEN).body()).path("pools").path(tier);
  }

  private static void readUntil(InputStream in, String text) throws IOException {
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    while (!seen.toString(StandardCharsets.UTF_8).contains(text)) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the stream ended before " + text + ": " + seen);
      }
      seen.write(b);
    }
  }

  /**
   * An upstream that never finishes: a buffered request gets nothing, a streamed one its first
   * events ("Hello", " world") and then nothing. Each connection is held until the gateway closes it.
   */
  private static HoldingUpstream stallingUpstream() throws IOException {
    return new HoldingUpstream((n, body, out) -> {
      if (body.contains("\"stream\":true")) {
        String events = OpenAiStubs.chatStreamBody(false, "Hello", " world");
        int world = events.indexOf("world");
        HoldingUpstream.writeStreamStart(out, events.substring(0, events.indexOf("\n\n", world) + 2));
      }
      return true;
    });
  }
}
