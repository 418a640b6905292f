package io.spillway.app.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code spillway.jar demo}, in process on free ports: the gateway serves through the simulators. */
class DemoTest {
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  Demo demo;

  @BeforeEach
  void start() {
    demo = Demo.start(new Demo.Options(0, Duration.ofSeconds(20), Duration.ofSeconds(25), Duration.ofSeconds(30),
        Duration.ZERO), clock);
  }

  @AfterEach
  void stop() {
    demo.close();
  }

  @Test
  void aChatRequestThroughTheGatewayIsAnsweredByTheSimulatedCloud() {
    OpenAIClient sdk = OpenAIOkHttpClient.builder().baseUrl(demo.gateway().baseUrl()).apiKey(Demo.GOLD_KEY)
        .maxRetries(0).timeout(Duration.ofSeconds(20)).build();
    ChatCompletionCreateParams params =
        ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O_MINI).addUserMessage("Hello demo").build();

    ChatCompletion completion = sdk.chat().completions().create(params);
    assertThat(completion.choices().get(0).message().content().orElseThrow())
        .contains("simulated cloud").contains("Hello demo");

    try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(params)) {
      String text = stream.stream().flatMap(c -> c.choices().stream())
          .map(c -> c.delta().content().orElse("")).collect(Collectors.joining());
      assertThat(text).isEqualTo(completion.choices().get(0).message().content().orElseThrow());
    }

    HttpResponse<String> raw = SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.SILVER_KEY,
        "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}]}");
    assertThat(raw.statusCode()).isEqualTo(200);
    assertThat(raw.headers().firstValue("x-spillway-backend")).hasValue("cloud");
  }

  @Test
  void requestsMoveToTheSimulatedOllamaAndBackWithoutAFailedCall() {
    await().atMost(Duration.ofSeconds(20)).until(() -> demo.gateway().local().readiness().checked());
    String ping = "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}]}";
    String stream = "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"ping\"}]}";
    assertThat(backendOf(SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.GOLD_KEY, ping)))
        .isEqualTo("cloud");

    clock.advance(Duration.ofSeconds(20));
    for (int i = 0; i < 4; i++) {
      HttpResponse<String> answer = SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.GOLD_KEY, ping);
      assertThat(backendOf(answer)).as("request %d while the cloud is at capacity", i + 1).isEqualTo("local");
      assertThat(answer.body()).contains("simulated Ollama").contains("llama3.2:3b");
    }
    HttpResponse<String> streamed = SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.GOLD_KEY, stream);
    assertThat(backendOf(streamed)).isEqualTo("local");
    assertThat(streamed.body()).contains("chat.completion.chunk").endsWith("data: [DONE]\n\n");

    clock.advance(Duration.ofSeconds(30));
    assertThat(demo.cloud().atCapacity()).isFalse();
    assertThat(backendOf(SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.GOLD_KEY, ping)))
        .as("the probe after failover.localFor").isEqualTo("cloud");
    assertThat(backendOf(SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.GOLD_KEY, stream)))
        .isEqualTo("cloud");
  }

  @Test
  void aStreamedResponseThroughTheGatewayCarriesTheEventsAnAgentBuildsItsTurnFrom() {
    HttpResponse<String> streamed = SimHttp.post(demo.gateway().baseUrl() + "/responses", Demo.GOLD_KEY,
        "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"input\":\"Fix the build\"}");

    assertThat(backendOf(streamed)).isEqualTo("cloud");
    assertThat(streamed.body()).contains("event: response.in_progress", "event: response.content_part.added",
        "event: response.output_text.done", "event: response.content_part.done", "event: response.output_item.done");
    assertThat(streamed.body().strip()).startsWith("event: response.created")
        .contains("event: response.completed\ndata: {\"type\":\"response.completed\"");
  }

  @Test
  void anAgentTurnOnTheSimulatedOllamaCallsAToolThenAnswersFromItsOutput() throws Exception {
    await().atMost(Duration.ofSeconds(20)).until(() -> demo.gateway().local().readiness().checked());
    clock.advance(Duration.ofSeconds(20));
    String tools = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"shell\",\"parameters\":"
        + "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
        + "\"required\":[\"command\"]}}}]";
    String task = "{\"role\":\"user\",\"content\":\"What is in this folder?\"}";

    HttpResponse<String> call = SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.SILVER_KEY,
        "{\"model\":\"gpt-4o-mini\"," + tools + ",\"messages\":[" + task + "]}");
    assertThat(backendOf(call)).isEqualTo("local");
    JsonNode choice = Json.parse(call.body()).path("choices").get(0);
    assertThat(choice.path("finish_reason").asText()).isEqualTo("tool_calls");
    JsonNode toolCall = choice.path("message").path("tool_calls").get(0);
    assertThat(toolCall.path("function").path("name").asText()).isEqualTo("shell");
    assertThat(Json.parse(toolCall.path("function").path("arguments").asText()).path("command").get(0).asText())
        .isEqualTo("ls");

    HttpResponse<String> answer = SimHttp.post(demo.gateway().baseUrl() + "/chat/completions", Demo.SILVER_KEY,
        "{\"model\":\"gpt-4o-mini\"," + tools + ",\"messages\":[" + task + ",{\"role\":\"assistant\","
            + "\"content\":null,\"tool_calls\":[" + toolCall + "]},{\"role\":\"tool\",\"tool_call_id\":"
            + Json.toString(toolCall.path("id")) + ",\"content\":\"README.md src\"}]}");
    assertThat(backendOf(answer)).isEqualTo("local");
    JsonNode done = Json.parse(answer.body()).path("choices").get(0);
    assertThat(done.path("finish_reason").asText()).isEqualTo("stop");
    assertThat(done.path("message").path("content").asText()).contains("The tool printed: \"README.md src\"");
  }

  private static String backendOf(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return response.headers().firstValue("x-spillway-backend").orElseThrow();
  }

  @Test
  void theSimulatedCloudGoesAtCapacityOnTheDemoSchedule() {
    assertThat(demo.cloud().atCapacity()).isFalse();

    clock.advance(Duration.ofSeconds(20));

    assertThat(demo.cloud().atCapacity()).isTrue();
    clock.advance(Duration.ofSeconds(25));
    assertThat(demo.cloud().atCapacity()).isFalse();
  }

  @Test
  void theLocalBackendIsReadyAgainstTheSimulatedOllama() throws Exception {
    await().atMost(Duration.ofSeconds(20)).until(() -> demo.gateway().local().readiness().checked());

    assertThat(demo.gateway().local().ready()).isTrue();
    HttpResponse<String> readyz = SimHttp.get(demo.gateway().baseUrl().replace("/v1", "/readyz"), null);
    assertThat(readyz.statusCode()).isEqualTo(200);
    JsonNode local = Json.parse(readyz.body()).path("local");
    assertThat(local.path("ready").asBoolean()).isTrue();
    assertThat(local.path("version").asText()).isEqualTo(SimulatedOllama.VERSION);
    assertThat(local.path("missing").isEmpty()).isTrue();

    HttpResponse<String> status = SimHttp.get(demo.gateway().baseUrl().replace("/v1", "/admin/status"), Demo.ADMIN_TOKEN);
    assertThat(status.statusCode()).isEqualTo(200);
    assertThat(Json.parse(status.body()).path("local").path("baseUrl").asText()).isEqualTo(demo.ollama().baseUrl());
  }

  @Test
  void theInstructionsNameTheUrlsKeysAndCurlLines() {
    String text = demo.instructions();

    assertThat(text).contains(demo.gateway().baseUrl()).contains("/dashboard")
        .contains(Demo.GOLD_KEY).contains(Demo.SILVER_KEY).contains(Demo.BRONZE_KEY).contains(Demo.ADMIN_TOKEN)
        .contains("curl -s " + demo.gateway().baseUrl() + "/chat/completions")
        .contains("x-spillway-backend")
        .contains(demo.cloud().baseUrl()).contains(demo.ollama().baseUrl())
        .contains("30s");
  }

  @Test
  void theInstructionsPrintTheCodexProviderBlockReadyToPaste() {
    String text = demo.instructions();

    assertThat(text).contains("model_provider = \"spillway\"").contains("[model_providers.spillway]")
        .contains("base_url = \"" + demo.gateway().baseUrl() + "\"").contains("env_key = \"SPILLWAY_KEY\"")
        .contains("wire_api = \"responses\"").contains("SPILLWAY_KEY=" + Demo.GOLD_KEY + " codex");
  }

  @Test
  void theAccessLogCanBeSentToAFileSoTheTerminalShowsTheStory(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
      throws Exception {
    java.nio.file.Path file = dir.resolve("access.log");
    // The test JVM keeps the access log quiet (WARN); the demo's runs at the default INFO.
    ch.qos.logback.classic.Logger access = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger("spillway.access");
    ch.qos.logback.classic.Level quiet = access.getLevel();
    access.setLevel(ch.qos.logback.classic.Level.INFO);
    try (AutoCloseable redirected = io.spillway.app.observe.DefaultLogging.accessLogTo(file)) {
      java.net.http.HttpResponse<String> answer = java.net.http.HttpClient.newHttpClient().send(
          java.net.http.HttpRequest.newBuilder(java.net.URI.create(demo.gateway().baseUrl() + "/chat/completions"))
              .header("Authorization", "Bearer " + Demo.GOLD_KEY).header("Content-Type", "application/json")
              .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                  "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}"))
              .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
      assertThat(answer.statusCode()).isEqualTo(200);
      String requestId = answer.headers().firstValue("x-request-id").orElseThrow();
      org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).untilAsserted(() ->
          assertThat(java.nio.file.Files.readString(file)).contains(requestId));
    } finally {
      access.setLevel(quiet);
    }
  }
}
