package io.spillway.local.ollama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Unsupported;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link CompletionTranslation} alone: legacy completions ⇄ Ollama's {@code /api/generate}. */
class CompletionTranslationTest {
  static ObjectNode json(String text) throws Exception {
    return (ObjectNode) Json.parse(text);
  }

  @Test
  void requestCarriesPromptSuffixAndStopAndDropsEcho() throws Exception {
    CompletionTranslation translation = new CompletionTranslation(
        json("{\"model\":\"gpt-3.5-turbo-instruct\",\"prompt\":[\"def add(\"],\"suffix\":\"return\",\"stop\":\"\\n\\n\","
            + "\"echo\":true}"), "600s", null);
    Unsupported unsupported = new Unsupported();

    ObjectNode sent = translation.request("qwen2.5-coder:7b", unsupported);

    assertThat(sent.toString()).isEqualTo("{\"model\":\"qwen2.5-coder:7b\",\"prompt\":\"def add(\",\"suffix\":\"return\","
        + "\"stream\":false,\"options\":{\"stop\":[\"\\n\\n\"]},\"keep_alive\":\"600s\"}");
    assertThat(translation.dropped()).containsExactly("echo");
    assertThat(translation.stream()).isFalse();
    assertThat(translation.api()).isEqualTo("Completions API");
  }

  @Test
  void aBatchOfPromptsIsUnsupported() throws Exception {
    Unsupported unsupported = new Unsupported();

    new CompletionTranslation(json("{\"prompt\":[\"a\",\"b\"]}"), "1s", null).request("m", unsupported);

    assertThat(unsupported.isEmpty()).isFalse();
  }

  @Test
  void wholeAnswerIsATextCompletionFromTheModelThatServed() throws Exception {
    ObjectNode answer = new CompletionTranslation(json("{\"prompt\":\"x\"}"), "1s", null).answer(
        json("{\"model\":\"qwen2.5-coder:7b\",\"response\":\"a + b\",\"done\":true,\"done_reason\":\"stop\","
            + "\"prompt_eval_count\":5,\"eval_count\":3}"), "fallback", 7L);

    assertThat(answer.path("object").asText()).isEqualTo("text_completion");
    assertThat(answer.path("model").asText()).isEqualTo("qwen2.5-coder:7b");
    assertThat(answer.at("/choices/0/text").asText()).isEqualTo("a + b");
    assertThat(answer.at("/choices/0/finish_reason").asText()).isEqualTo("stop");
    assertThat(answer.at("/usage/total_tokens").asLong()).isEqualTo(8);
  }

  @Test
  void streamIsTextChunksThenFinishAndDoneWithoutUsageUnlessAsked() throws Exception {
    StreamTranslator stream = new CompletionTranslation(json("{\"prompt\":\"x\",\"stream\":true}"), "1s", null)
        .streamTranslator("qwen2.5-coder:7b", 7L);

    List<SseEvent> events = new ArrayList<>();
    events.addAll(stream.line(json("{\"response\":\"a\",\"done\":false}")));
    ObjectNode done = json("{\"response\":\"\",\"done\":true,\"done_reason\":\"stop\"}");
    events.addAll(stream.line(done));
    events.addAll(stream.end(done));

    assertThat(events).hasSize(3);
    assertThat(Json.parse(events.get(0).data()).at("/choices/0/text").asText()).isEqualTo("a");
    assertThat(Json.parse(events.get(0).data()).has("usage")).isFalse();
    assertThat(Json.parse(events.get(1).data()).at("/choices/0/finish_reason").asText()).isEqualTo("stop");
    assertThat(Json.parse(events.get(1).data()).path("id").asText())
        .isEqualTo(Json.parse(events.get(0).data()).path("id").asText());
    assertThat(events.get(2).isDone()).isTrue();
  }
}
