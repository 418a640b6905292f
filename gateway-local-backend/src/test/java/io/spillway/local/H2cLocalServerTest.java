package io.spillway.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.LocalConfig;
import io.spillway.config.LocalServerConfig;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.ollama.OllamaStubs;
import io.spillway.local.ollama.OllamaTesting;
import io.spillway.server.testing.EventLoopClient;
import io.spillway.local.testing.H2cServer;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A local server that speaks only HTTP/2 with prior knowledge (vLLM behind an h2c proxy, say) is
 * served when its entry says {@code h2c: true}: both kinds of server, streamed and buffered answers.
 */
@ExtendWith(EventLoopClient.class)
class H2cLocalServerTest {
  static final String MODEL = "qwen2.5-coder:7b";
  static final String CHUNK = "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"" + MODEL
      + "\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},\"finish_reason\":%s}]}";

  final H2cServer server = new H2cServer(H2cLocalServerTest::answer);

  @AfterEach
  void stop() {
    server.close();
  }

  /** What the server answers: Ollama's native API and the OpenAI-compatible one, each streamed or not. */
  static H2cServer.Answer answer(String path, String body) {
    boolean stream = body.replace(" ", "").contains("\"stream\":true");
    return switch (path) {
      case "/api/chat" -> stream
          ? new H2cServer.Answer(200, "application/x-ndjson",
              OllamaStubs.chatStreamBody(MODEL, "stop", 5, 2, "Hello", " over h2c"))
          : new H2cServer.Answer(200, "application/json", OllamaStubs.chatFinalLine(MODEL, "stop", 5, 2)
              .replace("\"content\":\"\"", "\"content\":\"Hello over h2c\""));
      case "/v1/chat/completions" -> stream
          ? new H2cServer.Answer(200, "text/event-stream",
              "data: " + CHUNK.formatted("Hello", "null") + "\n\n"
                  + "data: " + CHUNK.formatted(" over h2c", "\"stop\"") + "\n\n"
                  + "data: [DONE]\n\n")
          : new H2cServer.Answer(200, "application/json", "{\"id\":\"chatcmpl-2\",\"object\":\"chat.completion\","
              + "\"created\":1,\"model\":\"" + MODEL + "\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
              + "\"assistant\",\"content\":\"Hello over h2c\"},\"finish_reason\":\"stop\"}],"
              + "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}");
      default -> new H2cServer.Answer(404, "application/json", "{\"error\":\"not found\"}");
    };
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"OPENAI", "OLLAMA"})
  void localServerOverH2cServesBothKinds(LocalConfig.Kind kind) {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", MODEL);
    LocalConfig shared = new LocalConfig(true, kind, server.baseUrl(), models, null, null, Duration.ofSeconds(10),
        null);
    LocalConfig own = shared.forServer(new LocalServerConfig("gpu-a", kind, server.baseUrl(), true));
    LocalServer local = LocalBackends.server(own, OllamaTesting.cloud(), FakeClock.at("2026-11-10T10:00:00Z"),
        new SimpleMeterRegistry(), EventLoopClient.http());

    GatewayResponse streamed = Blocking.await(local.callAsync(OllamaTesting.request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));
    List<SseEvent> events = OllamaTesting.drain(streamed);
    String text = events.stream().filter(event -> !event.isDone())
        .map(event -> OllamaTesting.data(event).path("choices").get(0).path("delta").path("content").asText(""))
        .collect(Collectors.joining());
    assertThat(text).isEqualTo("Hello over h2c");
    assertThat(events.get(events.size() - 1).isDone()).isTrue();

    GatewayResponse buffered = Blocking.await(local.callAsync(OllamaTesting.request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));
    assertThat(buffered.status()).isEqualTo(200);
    assertThat(OllamaTesting.json(buffered).path("choices").get(0).path("message").path("content").asText())
        .isEqualTo("Hello over h2c");
    assertThat(server.paths()).hasSize(2);
  }
}
