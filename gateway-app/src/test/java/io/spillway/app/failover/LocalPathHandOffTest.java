package io.spillway.app.failover;

import static io.spillway.app.failover.AgentModelStubs.ollamaAgent;
import static io.spillway.app.failover.FailoverFixtures.setBreaker;
import static io.spillway.app.failover.FailoverFixtures.stubChat;
import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.pipeline.Blocking;
import java.net.http.HttpResponse;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Where a request served locally runs. An OpenAI-kind local server (vLLM, llama.cpp, LM Studio) is
 * called like the cloud, without blocking, so its requests stay on the event loop; Ollama's
 * translation reads the answer by blocking, so its requests move to a virtual thread, for every
 * tier. The breaker is forced open, so every request goes local.
 */
class LocalPathHandOffTest {
  private static final String BUFFERED = GatewayHarness.chatBody("gpt-4o", "Say hello", false);
  private static final String STREAMED = GatewayHarness.chatBody("gpt-4o", "Say hello", true);

  @ParameterizedTest
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void anOpenAiKindLocalServerAnswersWithoutMovingWorkOffTheEventLoop(String key) {
    try (GatewayHarness h = GatewayHarness.start("local:\n  kind: openai\n")) {
      stubChat(h.ollama, "Local answer");
      assertThat(setBreaker(h, "{\"state\":\"open\"}").statusCode()).isEqualTo(200);
      h.post("/v1/chat/completions", key, BUFFERED); // the pool's first connection is set up lazily
      long before = Blocking.handOffs();

      HttpResponse<String> buffered = h.post("/v1/chat/completions", key, BUFFERED);
      HttpResponse<String> streamed = h.post("/v1/chat/completions", key, STREAMED);

      assertThat(buffered.statusCode()).as(buffered.body()).isEqualTo(200);
      assertThat(buffered.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(buffered.body()).contains("Local answer");
      assertThat(streamed.statusCode()).isEqualTo(200);
      assertThat(streamed.body()).contains("Local").contains("data: [DONE]");
      assertThat(Blocking.handOffs() - before).isZero();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void anOllamaAnswerMovesToAVirtualThreadBecauseItsTranslationBlocks(String key) {
    try (GatewayHarness h = GatewayHarness.start()) {
      ollamaAgent(h.ollama, "ls", "patch", "Done.", "Local answer");
      assertThat(setBreaker(h, "{\"state\":\"open\"}").statusCode()).isEqualTo(200);
      long before = Blocking.handOffs();

      HttpResponse<String> streamed = h.post("/v1/chat/completions", key, STREAMED);

      assertThat(streamed.statusCode()).as(streamed.body()).isEqualTo(200);
      assertThat(streamed.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(streamed.body()).contains("Local").contains("data: [DONE]");
      assertThat(Blocking.handOffs() - before).isPositive();
    }
  }
}
