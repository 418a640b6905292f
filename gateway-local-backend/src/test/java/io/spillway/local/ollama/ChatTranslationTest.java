package io.spillway.local.ollama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.StreamTranslator;
import io.spillway.local.Unsupported;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link ChatTranslation} alone: chat completions ⇄ Ollama's {@code /api/chat}. */
class ChatTranslationTest {
  static ObjectNode json(String text) throws Exception {
    return (ObjectNode) Json.parse(text);
  }

  @Test
  void requestCarriesMessagesSamplingKeepAliveAndTheFittedContextSize() throws Exception {
    ChatTranslation translation = new ChatTranslation(json("""
        {"model":"gpt-4o-mini","stream":true,"temperature":0.2,"max_tokens":50,"logit_bias":{"1":2},
         "messages":[{"role":"developer","content":"Be brief."},{"role":"user","content":[
           {"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]}]}"""),
        "1200s", 8192);
    Unsupported unsupported = new Unsupported();

    ObjectNode sent = translation.request("llama3.2:3b", unsupported);

    assertThat(sent.toString()).isEqualTo("{\"model\":\"llama3.2:3b\",\"messages\":["
        + "{\"role\":\"system\",\"content\":\"Be brief.\"},"
        + "{\"role\":\"user\",\"content\":\"What is this?\",\"images\":[\"iVBO\"]}],"
        + "\"stream\":true,\"options\":{\"temperature\":0.2,\"num_predict\":50,\"num_ctx\":8192},"
        + "\"keep_alive\":\"1200s\"}");
    assertThat(unsupported.isEmpty()).isTrue();
    assertThat(translation.dropped()).containsExactly("logit_bias");
    assertThat(translation.stream()).isTrue();
    assertThat(translation.api()).isEqualTo("Chat Completions API");
  }

  @Test
  void remoteImagesAreCollectedAsUnsupported() throws Exception {
    Unsupported unsupported = new Unsupported();

    new ChatTranslation(json("""
        {"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}]}"""),
        "1s", null).request("m", unsupported);

    assertThat(unsupported.isEmpty()).isFalse();
  }

  @Test
  void wholeAnswerNamesTheModelThatServedAndCarriesToolCallsWithIds() throws Exception {
    ChatTranslation translation = new ChatTranslation(json("{\"messages\":[]}"), "1s", null);

    ObjectNode answer = translation.answer(json("""
        {"model":"qwen2.5-coder:7b","done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":4,
         "message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"ls","arguments":{"dir":"."}}}]}}"""),
        "fallback", 1_700_000_000L);

    assertThat(answer.path("model").asText()).isEqualTo("qwen2.5-coder:7b");
    assertThat(answer.path("created").asLong()).isEqualTo(1_700_000_000L);
    JsonNode choice = answer.path("choices").get(0);
    assertThat(choice.path("finish_reason").asText()).isEqualTo("tool_calls");
    assertThat(choice.path("message").path("content").isNull()).isTrue();
    JsonNode call = choice.path("message").path("tool_calls").get(0);
    assertThat(call.path("id").asText()).startsWith("call_");
    assertThat(call.path("function").path("arguments").asText()).isEqualTo("{\"dir\":\".\"}");
    assertThat(answer.path("usage").path("total_tokens").asLong()).isEqualTo(14);
  }

  @Test
  void streamIsRoleChunkContentFinishUsageAndDone() throws Exception {
    ChatTranslation translation = new ChatTranslation(
        json("{\"stream\":true,\"stream_options\":{\"include_usage\":true},\"messages\":[]}"), "1s", null);
    StreamTranslator stream = translation.streamTranslator("fallback", 1L);

    List<SseEvent> events = new ArrayList<>();
    events.addAll(stream.line(json("{\"model\":\"llama3.2:3b\",\"message\":{\"content\":\"Hi\"},\"done\":false}")));
    JsonNode done = json("{\"model\":\"llama3.2:3b\",\"message\":{\"content\":\"\"},\"done\":true,"
        + "\"done_reason\":\"length\",\"prompt_eval_count\":3,\"eval_count\":2}");
    events.addAll(stream.line(done));
    events.addAll(stream.end(done));

    assertThat(events).hasSize(5);
    assertThat(Json.parse(events.get(0).data()).at("/choices/0/delta/role").asText()).isEqualTo("assistant");
    assertThat(Json.parse(events.get(1).data()).at("/choices/0/delta/content").asText()).isEqualTo("Hi");
    assertThat(Json.parse(events.get(1).data()).path("model").asText()).isEqualTo("llama3.2:3b");
    assertThat(Json.parse(events.get(2).data()).at("/choices/0/finish_reason").asText()).isEqualTo("length");
    assertThat(Json.parse(events.get(3).data()).at("/usage/total_tokens").asLong()).isEqualTo(5);
    assertThat(events.get(4).isDone()).isTrue();
  }
}
