package io.spillway.local.openai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.junit5.WireMockExtension;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.config.LocalConfig;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.LocalBackend;
import io.spillway.local.LocalBackends;
import io.spillway.local.LocalReadiness;
import io.spillway.local.ollama.OllamaTesting;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import io.spillway.server.testing.EventLoopClient;

/** {@code local.kind: openai}: an OpenAI-compatible local server (vLLM, llama.cpp, Ollama's /v1). */
@ExtendWith(EventLoopClient.class)
class OpenAiLocalBackendTest {
  @RegisterExtension
  static WireMockExtension vllm =
      WireMockExtension.newInstance().options(wireMockConfig().dynamicPort().bindAddress("127.0.0.1")).build();

  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  LocalConfig config() {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "Qwen/Qwen2.5-Coder-7B-Instruct");
    models.put("gpt-4o-mini", "meta-llama/Llama-3.2-3B-Instruct");
    return new LocalConfig(true, LocalConfig.Kind.OPENAI, vllm.baseUrl(), models, null, null, Duration.ofSeconds(10), null);
  }

  LocalBackend backend() {
    return new LocalBackend(LocalBackends.server(config(), OllamaTesting.cloud(), clock,
        new SimpleMeterRegistry(), EventLoopClient.http()), config(), clock, scheduler, new SimpleMeterRegistry());
  }

  @Test
  void requestsAreForwardedWithTheMappedModelAndNoKeyAtAll() throws IOException {
    vllm.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "application/json")
        .withBody("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"meta-llama/Llama-3.2-3B-Instruct\","
            + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}],"
            + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}")));

    GatewayResponse response = Blocking.await(backend().callAsync(OllamaTesting.request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"top_k\":20}")));

    assertThat(response.status()).isEqualTo(200);
    LoggedRequest sent = vllm.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).get(0);
    JsonNode body = Json.parse(sent.getBodyAsString());
    assertThat(body.path("model").asText()).isEqualTo("meta-llama/Llama-3.2-3B-Instruct");
    assertThat(body.path("top_k").asInt()).as("unknown fields pass through to OpenAI-compatible servers").isEqualTo(20);
    assertThat(sent.containsHeader("Authorization")).isFalse();
  }

  @Test
  void anOpenAiKindServerAnswersOnTheEventLoopItWasCalledOnWithoutAVirtualThread() throws Exception {
    vllm.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "application/json")
        .withBody("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"q\","
            + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}")));
    LocalBackend local = backend();
    var request = OllamaTesting.request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    Executor loop = EventLoopClient.loop();
    request.setAttribute(RequestAttributes.CONNECTION_LOOP, loop);
    CompletableFuture<Thread> loopThread = new CompletableFuture<>();
    CompletableFuture<Thread> completedOn = new CompletableFuture<>();
    CompletableFuture<GatewayResponse> answer = new CompletableFuture<>();

    // Called on the loop that receives the answer: had the call blocked it, no answer could arrive.
    loop.execute(() -> {
      loopThread.complete(Thread.currentThread());
      local.callAsync(request).whenComplete((response, failure) -> {
        completedOn.complete(Thread.currentThread());
        if (failure != null) {
          answer.completeExceptionally(failure);
        } else {
          answer.complete(response);
        }
      });
    });

    assertThat(answer.get(5, TimeUnit.SECONDS).status()).isEqualTo(200);
    assertThat(completedOn.get()).isSameAs(loopThread.get());
    assertThat(completedOn.get().isVirtual()).isFalse();
  }

  @Test
  void readinessComesFromTheServersModelList() {
    vllm.stubFor(get("/v1/models").willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json")
        .withBody("{\"object\":\"list\",\"data\":[{\"id\":\"Qwen/Qwen2.5-Coder-7B-Instruct\",\"object\":\"model\","
            + "\"created\":1,\"owned_by\":\"vllm\"}]}")));
    LocalBackend local = backend();

    LocalReadiness readiness = local.checkNow();

    assertThat(readiness.reachable()).isTrue();
    assertThat(readiness.keepWarm()).isFalse();
    assertThat(readiness.missingModels()).containsExactly("meta-llama/Llama-3.2-3B-Instruct");
    assertThat(readiness.missing().get(0).fix()).contains("Qwen/Qwen2.5-Coder-7B-Instruct");
    assertThat(local.ready()).isTrue();
  }

  @Test
  void thereIsNoKeepWarmForOpenAiCompatibleServers() {
    LocalBackend local = backend();

    local.warmNow();
    local.warmUp();

    assertThat(vllm.getAllServeEvents()).isEmpty();
  }

  @Test
  void vllmsMaxModelLenIsTheWindowAndRequestsAreFittedToItWithoutNumCtx() throws IOException {
    vllm.stubFor(get("/v1/models").willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json")
        .withBody("{\"object\":\"list\",\"data\":[{\"id\":\"Qwen/Qwen2.5-Coder-7B-Instruct\",\"object\":\"model\","
            + "\"owned_by\":\"vllm\",\"max_model_len\":4096},{\"id\":\"meta-llama/Llama-3.2-3B-Instruct\","
            + "\"object\":\"model\",\"owned_by\":\"vllm\",\"max_model_len\":131072}]}")));
    vllm.stubFor(post("/v1/chat/completions").willReturn(aResponse().withStatus(200)
        .withHeader("Content-Type", "application/json")
        .withBody("{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"q\","
            + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}")));
    LocalBackend local = backend();
    local.checkNow();
    StringBuilder messages = new StringBuilder("[{\"role\":\"system\",\"content\":\"Be exact.\"}");
    for (int i = 0; i < 30; i++) {
      messages.append(",{\"role\":\"user\",\"content\":\"").append("word ".repeat(200)).append("\"}");
    }
    messages.append(",{\"role\":\"user\",\"content\":\"the question\"}]");

    var request = OllamaTesting.request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"messages\":" + messages + "}");
    GatewayResponse response = Blocking.await(local.callAsync(request));

    assertThat(local.contextWindows().of("Qwen/Qwen2.5-Coder-7B-Instruct")).isEqualTo(4096);
    assertThat(local.contextWindows().of("meta-llama/Llama-3.2-3B-Instruct")).isEqualTo(131072);
    assertThat(response.status()).isEqualTo(200);
    assertThat(RequestOutcome.of(request).degraded()).containsExactly("context_fit");
    JsonNode sent = Json.parse(vllm.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions"))).get(0).getBodyAsString());
    assertThat(sent.has("options")).isFalse();
    assertThat(sent.path("messages").get(0).path("content").asText()).isEqualTo("Be exact.");
    assertThat(sent.path("messages").get(sent.path("messages").size() - 1).path("content").asText())
        .isEqualTo("the question");
    assertThat(sent.path("messages").size()).isLessThan(32);
  }

  @Test
  void llamaServersSlotContextIsTheWindow() {
    vllm.stubFor(get("/v1/models").willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json")
        .withBody("{\"object\":\"list\",\"data\":[{\"id\":\"Qwen/Qwen2.5-Coder-7B-Instruct\",\"object\":\"model\","
            + "\"owned_by\":\"llamacpp\",\"meta\":{\"n_ctx_train\":32768}}]}")));
    vllm.stubFor(get("/props").willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json")
        .withBody("{\"total_slots\":4,\"default_generation_settings\":{\"n_ctx\":16384},\"model_alias\":\"q\"}")));

    assertThat(LocalBackends.server(config(), OllamaTesting.cloud(), clock, new SimpleMeterRegistry(), EventLoopClient.http())
        .contextWindow("Qwen/Qwen2.5-Coder-7B-Instruct")).hasValue(16384);
  }
}
