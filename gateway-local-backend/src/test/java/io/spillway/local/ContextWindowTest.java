package io.spillway.local;

import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.config.ConfigLoader;
import io.spillway.config.LocalConfig;
import io.spillway.core.error.UnsupportedOnLocalException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.ollama.OllamaStubs;
import io.spillway.local.ollama.OllamaTesting;
import io.spillway.server.testing.EventLoopClient;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Each local model's context window: configured, learned from Ollama's /api/show, or the default; and num_ctx. */
@ExtendWith(EventLoopClient.class)
class ContextWindowTest {
  @RegisterExtension
  static WireMockExtension ollama =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  LocalBackend local;

  @BeforeEach
  void setUp() {
    ollama.stubFor(get("/api/version").willReturn(OllamaStubs.version("0.12.6")));
    ollama.stubFor(get("/api/tags").willReturn(OllamaStubs.tags("qwen2.5-coder:7b", "llama3.2:3b")));
    ollama.stubFor(post("/api/show").withRequestBody(equalToJson("{\"model\":\"qwen2.5-coder:7b\"}"))
        .willReturn(OllamaStubs.show("qwen2", 32768)));
    ollama.stubFor(post("/api/show").withRequestBody(equalToJson("{\"model\":\"llama3.2:3b\"}"))
        .willReturn(OllamaStubs.show("llama", 131072)));
    ollama.stubFor(post("/api/chat").willReturn(OllamaStubs.chat("qwen2.5-coder:7b", "done", "stop", 20, 2)));
  }

  @AfterEach
  void tearDown() {
    if (local != null) {
      local.close();
    }
    scheduler.shutdownNow();
  }

  LocalBackend backend(LocalConfig config) {
    local = new LocalBackend(
        LocalBackends.server(config, OllamaTesting.cloud(), clock, meters, EventLoopClient.http()),
        config, clock, scheduler, meters);
    return local;
  }

  static LocalConfig config(String yaml) {
    return new ConfigLoader(Map.<String, String>of()::get).parse("test", yaml).local();
  }

  GatewayResponse chat(String model, String userText) {
    String body = Json.toString(Json.object().put("model", model).set("messages",
        Json.MAPPER.createArrayNode().add(Json.object().put("role", "user").put("content", userText))));
    return Blocking.await(local.callAsync(OllamaTesting.request(Route.CHAT_COMPLETIONS, body)));
  }

  JsonNode lastChatBody() throws IOException {
    var requests = ollama.findAll(postRequestedFor(urlEqualTo("/api/chat")));
    return Json.parse(requests.get(requests.size() - 1).getBodyAsString());
  }

  @Test
  void theProbeLearnsEachModelsWindowFromApiShowOnce() {
    LocalBackend backend = backend(OllamaTesting.config(ollama.baseUrl()));

    backend.checkNow();
    backend.checkNow();

    assertThat(backend.contextWindows().of("qwen2.5-coder:7b")).isEqualTo(32768);
    assertThat(backend.contextWindows().of("llama3.2:3b")).isEqualTo(131072);
    assertThat(backend.contextWindows().source("llama3.2:3b")).isEqualTo("server");
    ollama.verify(2, postRequestedFor(urlEqualTo("/api/show")));
  }

  @Test
  void aRequestCarriesNumCtxSizedToItsPromptAndAnswer() throws IOException {
    backend(OllamaTesting.config(ollama.baseUrl())).checkNow();

    chat("gpt-4o", "Say hi");
    assertThat(lastChatBody().path("options").path("num_ctx").asInt()).as("a few tokens + 4096 reserve").isEqualTo(8192);

    chat("gpt-4o", Conversationless.words(9000));
    assertThat(lastChatBody().path("options").path("num_ctx").asInt()).isEqualTo(16384);

    chat("gpt-4o-mini", Conversationless.words(20000));
    assertThat(lastChatBody().path("options").path("num_ctx").asInt())
        .as("llama3.2's 131072 window is capped by local.context.maxTokens").isEqualTo(32768);
  }

  @Test
  void aConfiguredContextWindowWinsAndApiShowIsNotAskedForIt() throws IOException {
    backend(config("""
        local:
          baseUrl: %s
          models:
            default: { model: "qwen2.5-coder:7b", contextTokens: 6000 }
        """.formatted(ollama.baseUrl()))).checkNow();

    chat("gpt-4o", Conversationless.words(1500));

    assertThat(local.contextWindows().of("qwen2.5-coder:7b")).isEqualTo(6000);
    assertThat(lastChatBody().path("options").path("num_ctx").asInt()).isEqualTo(6000);
    ollama.verify(0, postRequestedFor(urlEqualTo("/api/show")));
  }

  @Test
  void whenApiShowFailsTheDefaultWindowApplies() {
    ollama.stubFor(post("/api/show").willReturn(OllamaStubs.error(404, "model 'qwen2.5-coder:7b' not found")));
    backend(config("""
        local:
          baseUrl: %s
          context: { defaultTokens: 4096 }
        """.formatted(ollama.baseUrl()))).checkNow();

    assertThat(local.contextWindows().of("qwen2.5-coder:7b")).isEqualTo(4096);
    assertThat(local.contextWindows().source("qwen2.5-coder:7b")).isEqualTo("default");
  }

  @Test
  void aWindowNotYetKnownIsAskedForOffTheRequestPath() {
    backend(OllamaTesting.config(ollama.baseUrl()));

    GatewayResponse answer = chat("gpt-4o", "Say hi");

    assertThat(answer.status()).isEqualTo(200);
    await().atMost(Duration.ofSeconds(5)).until(() -> local.contextWindows().known("qwen2.5-coder:7b"));
    assertThat(local.contextWindows().of("qwen2.5-coder:7b")).isEqualTo(32768);
  }

  @Test
  void aCutRequestSaysContextFitInItsAnswerAndOnTheRequest() throws IOException {
    backend(config("""
        local:
          baseUrl: %s
          models:
            default: { model: "qwen2.5-coder:7b", contextTokens: 4096 }
        """.formatted(ollama.baseUrl())));
    StringBuilder messages = new StringBuilder("[{\"role\":\"system\",\"content\":\"Be exact.\"}");
    for (int i = 0; i < 40; i++) {
      messages.append(",{\"role\":\"user\",\"content\":\"").append(Conversationless.words(150)).append("\"}");
      messages.append(",{\"role\":\"assistant\",\"content\":\"ok ").append(i).append("\"}");
    }
    messages.append(",{\"role\":\"user\",\"content\":\"last question\"}]");
    var request = OllamaTesting.request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"max_tokens\":500,\"messages\":" + messages + "}");
    RequestOutcome.of(request).degrade(List.of("temperature"));

    GatewayResponse answer = Blocking.await(local.callAsync(request));

    assertThat(answer.status()).isEqualTo(200);
    assertThat(RequestOutcome.of(request).degraded()).containsExactly("temperature", "context_fit");
    JsonNode sent = lastChatBody();
    assertThat(sent.path("messages").get(0).path("content").asText()).isEqualTo("Be exact.");
    assertThat(sent.path("messages").get(sent.path("messages").size() - 1).path("content").asText())
        .isEqualTo("last question");
    assertThat(sent.path("messages").size()).isLessThan(82);
    assertThat(sent.path("options").path("num_ctx").asInt()).isEqualTo(4096);
    assertThat(meters.get("spillway.local.context.fits").tag("result", "cut").counter().count()).isEqualTo(1.0);
  }

  @Test
  void aRequestThatCannotFitIsRefusedAsUnsupportedOnLocalWithoutCallingOllama() {
    backend(config("""
        local:
          baseUrl: %s
          models:
            default: { model: "qwen2.5-coder:7b", contextTokens: 2048 }
        """.formatted(ollama.baseUrl())));

    UnsupportedOnLocalException refused = catchThrowableOfType(UnsupportedOnLocalException.class,
        () -> chat("gpt-4o", Conversationless.words(5000)));

    assertThat(refused.code()).isEqualTo("unsupported_on_local");
    assertThat(refused.param()).isEqualTo("messages");
    assertThat(refused.api()).isEqualTo("Chat Completions API");
    assertThat(refused.remedy()).isEqualTo("send a shorter request");
    assertThat(refused.getMessage()).contains("qwen2.5-coder:7b").contains("context window");
    assertThat(refused.retryAfter()).as("only the router knows when the cloud may serve it").isNull();
    assertThat(meters.get("spillway.local.context.fits").tag("result", "refused").counter().count()).isEqualTo(1.0);
    ollama.verify(0, postRequestedFor(urlEqualTo("/api/chat")));
  }

  @Test
  void keepWarmLoadsAtTheSizeRequestsUseSoOllamaDoesNotReload() throws IOException {
    LocalBackend backend = backend(OllamaTesting.config(ollama.baseUrl()));
    ollama.stubFor(post("/api/generate").willReturn(OllamaStubs.loaded("qwen2.5-coder:7b")));
    backend.checkNow();

    backend.warmNow();
    assertThat(loadedContexts()).as("before any traffic: the usable window (32768, and llama's 131072 capped)")
        .containsExactly(32768, 32768);

    chat("gpt-4o", "Say hi");
    ollama.resetRequests();
    backend.warmNow();
    assertThat(loadedContexts()).as("then what the last request for each model used").containsExactly(8192, 32768);
  }

  List<Integer> loadedContexts() throws IOException {
    List<Integer> sizes = new java.util.ArrayList<>();
    for (var request : ollama.findAll(postRequestedFor(urlEqualTo("/api/generate")))) {
      sizes.add(Json.parse(request.getBodyAsString()).path("options").path("num_ctx").asInt());
    }
    return sizes;
  }

  /** Plain text of a known size. */
  static final class Conversationless {
    static String words(int n) {
      return "word ".repeat(n).trim();
    }
  }
}
