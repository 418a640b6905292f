package io.spillway.app.local;

import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.H2cOpenAiServer;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code local.h2c: true} through the real gateway: with the breaker forced open, every tier's
 * chat requests, buffered and streamed, go to the OpenAI-kind local server over HTTP/2 with prior
 * knowledge, multiplexed on one connection; the answers come back as from any local server.
 */
class LocalH2cGatewayTest {
  static H2cOpenAiServer server;
  static GatewayHarness harness;

  @BeforeAll
  static void start() {
    server = new H2cOpenAiServer("qwen2.5-coder:7b", "llama3.2:3b");
    harness = GatewayHarness.start("""
        local:
          kind: openai
          baseUrl: %s
          h2c: true
        """.formatted(server.baseUrl()));
    HttpResponse<String> open = harness.post("/admin/breaker", GatewayHarness.ADMIN_TOKEN, "{\"state\":\"open\"}");
    assertThat(open.statusCode()).as(open.body()).isEqualTo(200);
  }

  @AfterAll
  static void stop() {
    harness.close();
    server.close();
  }

  @ParameterizedTest(name = "{0} key, stream={1}")
  @CsvSource({
    "gold, false", "gold, true",
    "silver, false", "silver, true",
    "bronze, false", "bronze, true"})
  void chatRequestsReachTheLocalServerOverH2cOnOneConnection(String tier, boolean stream) {
    String key = switch (tier) {
      case "gold" -> GatewayHarness.GOLD_KEY;
      case "silver" -> GatewayHarness.SILVER_KEY;
      default -> GatewayHarness.BRONZE_KEY;
    };
    int before = server.chats().size();

    HttpResponse<String> answer = harness.post("/v1/chat/completions", key, chatBody("gpt-4o", "hi from " + tier, stream));

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("local");
    if (stream) {
      assertThat(answer.headers().firstValue("content-type")).hasValueSatisfying(type -> assertThat(type)
          .startsWith("text/event-stream"));
      assertThat(answer.body()).contains("\"Hello\"", "\" over h2c\"").contains("data: [DONE]");
    } else {
      assertThat(answer.body()).contains(H2cOpenAiServer.TEXT);
    }
    assertThat(server.chats()).hasSize(before + 1);
    assertThat(server.chats()).as("every chat request went over HTTP/2, on the one connection of the first")
        .allSatisfy(seen -> {
          assertThat(seen.protocol()).isEqualTo("h2");
          assertThat(seen.method()).isEqualTo("POST");
          assertThat(seen.connection()).isEqualTo(server.chats().getFirst().connection());
        });
  }
}
