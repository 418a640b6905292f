package io.spillway.local.ollama;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static io.spillway.local.ollama.OllamaTesting.data;
import static io.spillway.local.ollama.OllamaTesting.drain;
import static io.spillway.local.ollama.OllamaTesting.json;
import static io.spillway.local.ollama.OllamaTesting.request;
import static io.spillway.local.ollama.OllamaTesting.sentBody;
import static io.spillway.local.ollama.OllamaTesting.sentRequest;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.spillway.core.error.GatewayException;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import io.spillway.server.testing.EventLoopClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import io.spillway.core.pipeline.RequestAttributes;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** {@code /v1/chat/completions} served by Ollama's {@code /api/chat}. */
@ExtendWith(EventLoopClient.class)
class OllamaChatTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  OllamaBackend backend;

  @BeforeEach
  void setUp() {
    backend = OllamaTesting.backend(ollama.baseUrl(), clock);
  }

  @Test
  void chatIsTranslatedToApiChatWithTheMappedModelAndNoCredentials() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "Hello there!", "stop", 26, 7)));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","messages":[{"role":"developer","content":"Be brief."},
          {"role":"user","content":"Say hello"}]}""")));

    JsonNode sent = sentBody(ollama, "/api/chat");
    assertThat(sent.path("model").asText()).isEqualTo("llama3.2:3b");
    assertThat(sent.path("stream").asBoolean(true)).isFalse();
    assertThat(sent.path("keep_alive").asText()).isEqualTo("1200s");
    assertThat(sent.path("messages").toString())
        .isEqualTo("[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Say hello\"}]");
    assertThat(sentRequest(ollama, "/api/chat").containsHeader("Authorization")).isFalse();
    assertThat(sentRequest(ollama, "/api/chat").getBodyAsString()).doesNotContain(OllamaTesting.CLOUD_KEY);

    assertThat(response.status()).isEqualTo(200);
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isNull();
    JsonNode answer = json(response);
    assertThat(answer.path("object").asText()).isEqualTo("chat.completion");
    assertThat(answer.path("id").asText()).startsWith("chatcmpl-");
    assertThat(answer.path("created").asLong()).isEqualTo(clock.instant().getEpochSecond());
    assertThat(answer.path("model").asText()).isEqualTo("llama3.2:3b");
    JsonNode choice = answer.path("choices").get(0);
    assertThat(choice.path("message").path("role").asText()).isEqualTo("assistant");
    assertThat(choice.path("message").path("content").asText()).isEqualTo("Hello there!");
    assertThat(choice.path("finish_reason").asText()).isEqualTo("stop");
    assertThat(answer.path("usage").toString())
        .isEqualTo("{\"prompt_tokens\":26,\"completion_tokens\":7,\"total_tokens\":33}");
  }

  @Test
  void calledOnAnEventLoopOllamasBlockingCallMovesToAVirtualThread() throws Exception {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "Hello there!", "stop", 26, 7)));
    var request = request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello"}]}""");
    Executor loop = EventLoopClient.loop();
    request.setAttribute(RequestAttributes.CONNECTION_LOOP, loop);
    CompletableFuture<Thread> completedOn = new CompletableFuture<>();

    // Its translation waits for the answer by blocking, which an event loop must not do.
    loop.execute(() -> backend.callAsync(request).whenComplete((response, failure) ->
        completedOn.complete(failure == null && response.status() == 200 ? Thread.currentThread() : null)));

    assertThat(completedOn.get(5, TimeUnit.SECONDS)).isNotNull()
        .matches(Thread::isVirtual, "a virtual thread");
  }

  @ParameterizedTest
  @CsvSource({"stop, stop", "length, length", "load, stop"})
  void finishReasonComesFromDoneReason(String doneReason, String finishReason) {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("qwen2.5-coder:7b", "x", doneReason, 3, 1)));

    JsonNode answer = json(Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))));

    assertThat(answer.path("choices").get(0).path("finish_reason").asText()).isEqualTo(finishReason);
  }

  @ParameterizedTest
  @CsvSource({
    "gpt-4o-mini, llama3.2:3b",   // an entry of local.models
    "gpt-4o, qwen2.5-coder:7b",   // no entry: default
    "llama3.2:3b, llama3.2:3b"    // already a local model: served as asked
  })
  void modelsAreMappedByLocalModelsWithDefaultForTheRest(String requested, String local) {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat(local, "ok", "stop", 1, 1)));

    JsonNode answer = json(Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"" + requested + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))));

    assertThat(sentBody(ollama, "/api/chat").path("model").asText()).isEqualTo(local);
    assertThat(answer.path("model").asText()).isEqualTo(local);
  }

  @Test
  void samplingParametersGoToOptionsAndUnmappableOnesAreReported() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "{}", "stop", 5, 2)));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],
         "temperature":0.3,"top_p":0.7,"max_completion_tokens":256,"stop":"###","seed":42,
         "presence_penalty":0.5,"frequency_penalty":0.25,"response_format":{"type":"json_object"},
         "logit_bias":{"50256":-100},"n":2,"user":"someone","metadata":{"team":"web"},"store":false}""")));

    JsonNode sent = sentBody(ollama, "/api/chat");
    assertThat(sent.path("options").toString()).isEqualTo(
        "{\"temperature\":0.3,\"top_p\":0.7,\"seed\":42,\"presence_penalty\":0.5,\"frequency_penalty\":0.25,"
            + "\"stop\":[\"###\"],\"num_predict\":256}");
    assertThat(sent.path("format").asText()).isEqualTo("json");
    assertThat(sent.has("logit_bias")).isFalse();
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isEqualTo("n,logit_bias");
  }

  @Test
  void maxTokensBecomesNumPredictAndJsonSchemaBecomesFormat() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "{}", "stop", 5, 2)));

    Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"max_tokens":64,"stop":["a","b"],
         "response_format":{"type":"json_schema","json_schema":{"name":"age","schema":
           {"type":"object","properties":{"age":{"type":"integer"}},"required":["age"]}}}}""")));

    JsonNode sent = sentBody(ollama, "/api/chat");
    assertThat(sent.path("options").path("num_predict").asInt()).isEqualTo(64);
    assertThat(sent.path("options").path("stop").toString()).isEqualTo("[\"a\",\"b\"]");
    assertThat(sent.path("format").toString())
        .isEqualTo("{\"type\":\"object\",\"properties\":{\"age\":{\"type\":\"integer\"}},\"required\":[\"age\"]}");
  }

  @Test
  void streamBecomesChatCompletionChunksEndingInDone() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        OllamaStubs.chatStreamBody("llama3.2:3b", "stop", 26, 3, "Hel", "lo", " world"))));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));

    assertThat(sentBody(ollama, "/api/chat").path("stream").asBoolean()).isTrue();
    assertThat(response.isStream()).isTrue();
    assertThat(response.headers().get("content-type")).isEqualTo("text/event-stream");
    List<SseEvent> events = drain(response);
    assertThat(events.get(events.size() - 1).isDone()).isTrue();
    List<JsonNode> chunks = events.subList(0, events.size() - 1).stream().map(OllamaTesting::data).toList();
    assertThat(chunks).allSatisfy(chunk -> {
      assertThat(chunk.path("object").asText()).isEqualTo("chat.completion.chunk");
      assertThat(chunk.path("model").asText()).isEqualTo("llama3.2:3b");
      assertThat(chunk.has("usage")).isFalse();
    });
    assertThat(chunks.stream().map(c -> c.path("id").asText()).distinct()).hasSize(1);
    assertThat(chunks.get(0).path("choices").get(0).path("delta").path("role").asText()).isEqualTo("assistant");
    String text = chunks.stream()
        .map(c -> c.path("choices").get(0).path("delta").path("content").asText(""))
        .collect(Collectors.joining());
    assertThat(text).isEqualTo("Hello world");
    JsonNode last = chunks.get(chunks.size() - 1).path("choices").get(0);
    assertThat(last.path("finish_reason").asText()).isEqualTo("stop");
    assertThat(last.path("delta").isEmpty()).isTrue();
  }

  @Test
  void streamWithIncludeUsageEndsWithAUsageChunkAndReportsDroppedParameters() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        OllamaStubs.chatStreamBody("llama3.2:3b", "length", 26, 2, "a", "b"))));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"logprobs":true,
         "messages":[{"role":"user","content":"hi"}]}""")));
    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isEqualTo("logprobs");
    List<SseEvent> events = drain(response);

    assertThat(events.get(events.size() - 1).isDone()).isTrue();
    JsonNode usageChunk = data(events.get(events.size() - 2));
    assertThat(usageChunk.path("choices").isEmpty()).isTrue();
    assertThat(usageChunk.path("usage").toString())
        .isEqualTo("{\"prompt_tokens\":26,\"completion_tokens\":2,\"total_tokens\":28}");
    JsonNode finish = data(events.get(events.size() - 3));
    assertThat(finish.path("choices").get(0).path("finish_reason").asText()).isEqualTo("length");
    assertThat(finish.path("usage").isNull()).isTrue();
  }

  @Test
  void toolsAreSentInOllamaShapeAndToolCallsComeBackWithIdsAndJsonStringArguments() {
    ollama.stubFor(post("/api/chat").willReturn(
        OllamaStubs.chatToolCall("llama3.2:3b", "get_current_weather", "{\"format\":\"celsius\",\"location\":\"Paris, FR\"}")));

    JsonNode answer = json(Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","messages":[{"role":"user","content":"Weather in Paris?"}],
         "tools":[{"type":"function","function":{"name":"get_current_weather","description":"Get the weather",
           "strict":true,"parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}}],
         "tool_choice":"auto"}"""))));

    JsonNode sentTools = sentBody(ollama, "/api/chat").path("tools");
    assertThat(sentTools.toString()).isEqualTo("[{\"type\":\"function\",\"function\":{\"name\":\"get_current_weather\","
        + "\"description\":\"Get the weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"location\":"
        + "{\"type\":\"string\"}},\"required\":[\"location\"]}}}]");
    JsonNode choice = answer.path("choices").get(0);
    assertThat(choice.path("finish_reason").asText()).isEqualTo("tool_calls");
    assertThat(choice.path("message").path("content").isNull()).isTrue();
    JsonNode call = choice.path("message").path("tool_calls").get(0);
    assertThat(call.path("id").asText()).startsWith("call_");
    assertThat(call.path("type").asText()).isEqualTo("function");
    assertThat(call.path("function").path("name").asText()).isEqualTo("get_current_weather");
    assertThat(call.path("function").path("arguments").asText())
        .isEqualTo("{\"format\":\"celsius\",\"location\":\"Paris, FR\"}");
  }

  @Test
  void streamedToolCallsBecomeIndexedToolCallDeltas() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.ndjson(
        OllamaStubs.chatStreamToolCallBody("llama3.2:3b", "get_current_weather", "{\"location\":\"Toronto\"}"))));

    List<SseEvent> events = drain(Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Weather?"}],
         "tools":[{"type":"function","function":{"name":"get_current_weather","parameters":{"type":"object"}}}]}"""))));

    JsonNode delta = events.stream().filter(e -> !e.isDone()).map(OllamaTesting::data)
        .map(c -> c.path("choices").get(0).path("delta"))
        .filter(d -> d.has("tool_calls")).findFirst().orElseThrow();
    JsonNode call = delta.path("tool_calls").get(0);
    assertThat(call.path("index").asInt()).isZero();
    assertThat(call.path("id").asText()).startsWith("call_");
    assertThat(call.path("function").path("arguments").asText()).isEqualTo("{\"location\":\"Toronto\"}");
    JsonNode finish = data(events.get(events.size() - 2));
    assertThat(finish.path("choices").get(0).path("finish_reason").asText()).isEqualTo("tool_calls");
  }

  @Test
  void toolCallHistoryAndToolResultsAreTranslatedBack() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "It is 18°C.", "stop", 40, 6)));

    Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","messages":[
          {"role":"user","content":"Weather in Paris?"},
          {"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function",
             "function":{"name":"get_current_weather","arguments":"{\\"location\\":\\"Paris\\"}"}}]},
          {"role":"tool","tool_call_id":"call_abc","content":"18 degrees"}],
         "tools":[{"type":"function","function":{"name":"get_current_weather","parameters":{"type":"object"}}}]}""")));

    JsonNode messages = sentBody(ollama, "/api/chat").path("messages");
    assertThat(messages.get(1).toString()).isEqualTo("{\"role\":\"assistant\",\"tool_calls\":[{\"function\":"
        + "{\"name\":\"get_current_weather\",\"arguments\":{\"location\":\"Paris\"}}}],\"content\":\"\"}");
    assertThat(messages.get(2).toString())
        .isEqualTo("{\"role\":\"tool\",\"tool_name\":\"get_current_weather\",\"content\":\"18 degrees\"}");
  }

  @Test
  void toolChoiceRequiredIsDroppedAndReported() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llama3.2:3b", "ok", "stop", 1, 1)));

    GatewayResponse response = Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tool_choice":"required",
         "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]}""")));

    assertThat(response.headers().get(OllamaBackend.DROPPED_HEADER)).isEqualTo("tool_choice");
    assertThat(sentBody(ollama, "/api/chat").path("tools")).hasSize(1);
  }

  @Test
  void inlineImagesBecomeBase64Images() {
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("llava", "A pig.", "stop", 1, 2)));

    Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"llava","messages":[{"role":"user","content":[
          {"type":"text","text":"What is in this image?"},
          {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==","detail":"low"}}]}]}""")));

    JsonNode message = sentBody(ollama, "/api/chat").path("messages").get(0);
    assertThat(message.path("content").asText()).isEqualTo("What is in this image?");
    assertThat(message.path("images").toString()).isEqualTo("[\"iVBORw0KGgoAAAANSUhEUg==\"]");
  }

  @Test
  void remoteImageUrlsAreRefusedAsUnsupportedWithoutCallingOllama() {
    assertThatThrownBy(() -> Blocking.await(backend.callAsync(request(Route.CHAT_COMPLETIONS, """
        {"model":"gpt-4o","messages":[{"role":"user","content":[
          {"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}]}"""))))
        .isInstanceOfSatisfying(UnsupportedOnLocalException.class, e -> {
          assertThat(e.code()).isEqualTo("unsupported_on_local");
          assertThat(e.retryAfter()).isNull();
          assertThat(e.getMessage()).contains("image URLs that are not inline base64 data: URLs");
        });
    assertThat(ollama.getAllServeEvents()).isEmpty();
  }

}
