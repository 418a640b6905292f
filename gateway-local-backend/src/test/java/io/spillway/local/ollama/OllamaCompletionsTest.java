package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.local.ollama.OllamaTesting.data;
import static io.spillway.local.ollama.OllamaTesting.drain;
import static io.spillway.local.ollama.OllamaTesting.json;
import static io.spillway.local.ollama.OllamaTesting.request;
import static io.spillway.local.ollama.OllamaTesting.sentBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.util.List;
import java.util.stream.Collectors;
import io.spillway.server.testing.EventLoopClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code /v1/completions} served by Ollama's {@code /api/generate}. */
@ExtendWith(EventLoopClient.class)
class OllamaCompletionsTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final OllamaBackend backend = OllamaTesting.backend(ollama.baseUrl(), clock);

  @Test
  void completionIsTranslatedToApiGenerateWithPromptSuffixAndOptions() {
    ollama.stubFor(post("/api/generate").willReturn(
        OllamaStubs.generate("qwen2.5-coder:7b", "  return a + b", "stop", 17, 63)));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.COMPLETIONS, """
        {"model":"gpt-3.5-turbo-instruct","prompt":"def add(a, b):\\n","suffix":"\\n\\nprint(add(1, 2))",
         "max_tokens":32,"temperature":0,"stop":["\\n\\n"],"echo":true,"best_of":1}""")));

    JsonNode sent = sentBody(ollama, "/api/generate");
    assertThat(sent.path("model").asText()).isEqualTo("qwen2.5-coder:7b");
    assertThat(sent.path("prompt").asText()).isEqualTo("def add(a, b):\n");
    assertThat(sent.path("suffix").asText()).isEqualTo("\n\nprint(add(1, 2))");
    assertThat(sent.path("stream").asBoolean(true)).isFalse();
    assertThat(sent.path("options").toString()).isEqualTo("{\"temperature\":0,\"stop\":[\"\\n\\n\"],\"num_predict\":32}");
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isEqualTo("echo");

    JsonNode answer = json(response);
    assertThat(answer.path("object").asText()).isEqualTo("text_completion");
    assertThat(answer.path("id").asText()).startsWith("cmpl-");
    assertThat(answer.path("model").asText()).isEqualTo("qwen2.5-coder:7b");
    assertThat(answer.path("choices").get(0).path("text").asText()).isEqualTo("  return a + b");
    assertThat(answer.path("choices").get(0).path("finish_reason").asText()).isEqualTo("stop");
    assertThat(answer.path("usage").path("total_tokens").asInt()).isEqualTo(80);
  }

  @Test
  void streamedCompletionBecomesTextCompletionChunksWithUsageOnRequest() {
    ollama.stubFor(post("/api/generate").willReturn(OllamaStubs.ndjson(
        OllamaStubs.generateStreamBody("qwen2.5-coder:7b", "length", 12, 3, "The", " sky", " is"))));

    List<SseEvent> events = drain(Blocking.await(backend.callAsync(request(Route.COMPLETIONS,
        "{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":[\"Why is the sky blue?\"],\"stream\":true,"
            + "\"stream_options\":{\"include_usage\":true}}"))));

    assertThat(sentBody(ollama, "/api/generate").path("prompt").asText()).isEqualTo("Why is the sky blue?");
    assertThat(events.get(events.size() - 1).isDone()).isTrue();
    List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(OllamaTesting::data).toList();
    assertThat(chunks).allSatisfy(c -> assertThat(c.path("object").asText()).isEqualTo("text_completion"));
    String text = chunks.stream().filter(c -> !c.path("choices").isEmpty())
        .map(c -> c.path("choices").get(0).path("text").asText()).collect(Collectors.joining());
    assertThat(text).isEqualTo("The sky is");
    assertThat(chunks.get(chunks.size() - 2).path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");
    assertThat(data(events.get(events.size() - 2)).path("usage").toString())
        .isEqualTo("{\"prompt_tokens\":12,\"completion_tokens\":3,\"total_tokens\":15}");
  }

  @Test
  void aBatchOfPromptsIsRefusedAsUnsupportedOnLocal() {
    assertThatThrownBy(() -> Blocking.await(backend.callAsync(request(Route.COMPLETIONS,
        "{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":[\"one\",\"two\"]}"))))
        .isInstanceOfSatisfying(UnsupportedOnLocalException.class, e -> {
          assertThat(e.code()).isEqualTo("unsupported_on_local");
          assertThat(e.getMessage()).contains("a batch of several prompts").contains("Completions API");
          assertThat(e.param()).isEqualTo("prompt");
        });
  }
}
