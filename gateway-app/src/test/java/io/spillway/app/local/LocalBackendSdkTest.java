package io.spillway.app.local;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.models.ChatModel;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.models.Model;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.app.sim.SimulatedOllama;
import io.spillway.config.CloudConfig;
import io.spillway.config.LocalConfig;
import io.spillway.config.ServerConfig;
import io.spillway.core.api.ModelQueryInterceptor;
import io.spillway.core.api.ModelsEndpoint;
import io.spillway.core.api.OpenAiEndpoint;
import io.spillway.core.api.ParseInterceptor;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.Pipeline;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.LocalBackends;
import io.spillway.local.LocalServer;
import io.spillway.routing.LocalModelList;
import io.spillway.server.GatewayServer;
import io.spillway.server.HttpRoutes;
import io.spillway.server.testing.EventLoopClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The official OpenAI Java SDK reads what the Ollama backend makes of Ollama's answers, through
 * Spillway's real front end (here with the local backend as the only terminal stage; routing between
 * cloud and local is the router's job and tested with it).
 */
@ExtendWith(EventLoopClient.class)
class LocalBackendSdkTest {
  static final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  static SimulatedOllama ollama;
  static GatewayServer server;
  static OpenAIClient sdk;

  @BeforeAll
  static void start() {
    ollama = new SimulatedOllama("127.0.0.1", 0, clock, List.of("qwen2.5-coder:7b", "llama3.2:3b"), Duration.ZERO)
        .start();
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "qwen2.5-coder:7b");
    models.put("gpt-4o-mini", "llama3.2:3b");
    LocalConfig config = new LocalConfig(true, LocalConfig.Kind.OLLAMA, ollama.baseUrl(), models, null, null, null, null);
    LocalServer local = LocalBackends.server(config, CloudConfig.DEFAULTS, clock,
        new SimpleMeterRegistry(), EventLoopClient.http());
    Pipeline pipeline = new Pipeline(List.of(new ParseInterceptor()), Terminal.blocking(
        request -> Blocking.await(local.callAsync(request)).withHeader("x-spillway-backend", "local")));
    HttpRoutes.Builder routes = HttpRoutes.builder();
    for (Route route : Route.values()) {
      if (route.hasBody() && route.api() == Route.Api.OPENAI) {
        routes.route(route.method(), route.path(), new OpenAiEndpoint(route, pipeline));
      }
    }
    // The model list has its own service; here it is the local map, as the gateway answers while traffic is local.
    LocalModelList localModels = new LocalModelList(config, clock.instant());
    ModelsEndpoint modelList = new ModelsEndpoint(new Pipeline(List.of(new ModelQueryInterceptor()), 
        Terminal.blocking(request -> localModels.response())));
    routes.get(Route.MODELS.path(), modelList);
    server = new GatewayServer(ServerConfig.DEFAULTS.withHost("127.0.0.1").withPort(0), routes.build(), clock).start();
    sdk = OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + server.port() + "/v1").apiKey("sk-client")
        .maxRetries(0).timeout(Duration.ofSeconds(20)).build();
  }

  @AfterAll
  static void stop() {
    server.stop(Duration.ofSeconds(1));
    ollama.close();
  }

  @Test
  void chatCompletionReportsTheLocalModelAndUsage() {
    ChatCompletion completion = sdk.chat().completions().create(ChatCompletionCreateParams.builder()
        .model(ChatModel.GPT_4O_MINI).addSystemMessage("Be brief.").addUserMessage("Hello local").build());

    assertThat(completion.model()).isEqualTo("llama3.2:3b");
    assertThat(completion.choices().get(0).message().content().orElseThrow()).contains("Hello local");
    assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
    assertThat(completion.usage().orElseThrow().completionTokens()).isPositive();
  }

  @Test
  void chatStreamIsReadChunkByChunkWithAFinalUsageChunk() {
    ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O)
        .addUserMessage("Stream it").streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
        .build();
    String whole = sdk.chat().completions().create(params).choices().get(0).message().content().orElseThrow();

    try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(params)) {
      List<ChatCompletionChunk> chunks = stream.stream().toList();
      String text = chunks.stream().flatMap(c -> c.choices().stream())
          .map(c -> c.delta().content().orElse("")).collect(Collectors.joining());
      assertThat(text).isEqualTo(whole);
      assertThat(chunks.get(chunks.size() - 1).usage().orElseThrow().totalTokens()).isPositive();
      assertThat(chunks.get(0).model()).isEqualTo("qwen2.5-coder:7b");
    }
  }

  @Test
  void toolCallsArriveAsOpenAiToolCalls() {
    ChatCompletion completion = sdk.chat().completions().create(ChatCompletionCreateParams.builder()
        .model(ChatModel.GPT_4O_MINI).addUserMessage("Paris")
        .addTool(ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder()
            .name("get_current_weather").description("Weather for a location")
            .parameters(FunctionParameters.builder()
                .putAdditionalProperty("type", JsonValue.from("object"))
                .putAdditionalProperty("properties", JsonValue.from(Map.of("location", Map.of("type", "string"))))
                .putAdditionalProperty("required", JsonValue.from(List.of("location")))
                .build())
            .build()).build())
        .build());

    ChatCompletion.Choice choice = completion.choices().get(0);
    assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
    ChatCompletionMessageToolCall call = choice.message().toolCalls().orElseThrow().get(0);
    assertThat(call.asFunction().id()).startsWith("call_");
    assertThat(call.asFunction().function().name()).isEqualTo("get_current_weather");
    assertThat(call.asFunction().function().arguments()).isEqualTo("{\"location\":\"Paris\"}");
  }

  @Test
  void legacyCompletionsWork() {
    Completion completion = sdk.completions().create(CompletionCreateParams.builder()
        .model(CompletionCreateParams.Model.GPT_3_5_TURBO_INSTRUCT).prompt("def add(a, b):").maxTokens(3).build());

    assertThat(completion.model()).isEqualTo("qwen2.5-coder:7b");
    assertThat(completion.choices().get(0).finishReason()).isEqualTo(com.openai.models.completions.CompletionChoice.FinishReason.LENGTH);
  }

  @Test
  void responsesApiTextSubsetWorksStreamedAndNot() {
    ResponseCreateParams params = ResponseCreateParams.builder().model(ChatModel.GPT_4O_MINI)
        .instructions("Answer briefly.").input("Why is the sky blue?").build();

    Response response = sdk.responses().create(params);
    String text = response.output().get(0).asMessage().content().get(0).asOutputText().text();
    assertThat(text).contains("Why is the sky blue?");
    assertThat(response.usage().orElseThrow().outputTokens()).isPositive();

    try (StreamResponse<ResponseStreamEvent> stream = sdk.responses().createStreaming(params)) {
      List<ResponseStreamEvent> events = stream.stream().toList();
      String deltas = events.stream().filter(ResponseStreamEvent::isOutputTextDelta)
          .map(e -> e.asOutputTextDelta().delta()).collect(Collectors.joining());
      assertThat(deltas).isEqualTo(text);
      assertThat(events.get(0).isCreated()).isTrue();
      ResponseStreamEvent last = events.get(events.size() - 1);
      assertThat(last.isCompleted()).isTrue();
      assertThat(last.asCompleted().response().usage().orElseThrow().totalTokens()).isPositive();
    }
  }

  @Test
  void modelListNamesTheMappedModels() {
    List<String> ids = sdk.models().list().data().stream().map(Model::id).toList();

    assertThat(ids).containsExactly("gpt-4o-mini", "qwen2.5-coder:7b", "llama3.2:3b");
  }

  @Test
  void aRequestLocalCannotServeIsRefusedNamingWhatItCannotDo() throws Exception {
    java.net.http.HttpResponse<String> response = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + server.port() + "/v1/responses"))
            .header("Content-Type", "application/json")
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                "{\"model\":\"gpt-4o\",\"input\":\"hi\",\"previous_response_id\":\"resp_1\"}")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());

    // Without the router in front (as here) the bare refusal is a 400; the router decides status and
    // Retry-After from the breaker (tested in UnsupportedOnLocalTest).
    assertThat(response.statusCode()).isEqualTo(400);
    assertThat(response.headers().firstValue("retry-after")).isEmpty();
    JsonNode error = Json.parse(response.body()).path("error");
    assertThat(error.path("code").asText()).isEqualTo("unsupported_on_local");
    assertThat(error.path("param").asText()).isEqualTo("previous_response_id");
    assertThat(error.path("message").asText()).contains("previous_response_id").contains("Responses API");
  }
}
