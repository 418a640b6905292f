package io.spillway.app.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.spillway.config.CloudConfig;
import io.spillway.config.LocalConfig;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.core.testing.FakeClock;
import io.spillway.local.LocalBackend;
import io.spillway.local.LocalBackends;
import io.spillway.server.testing.EventLoopClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The simulated Ollama speaks Ollama's native API, well enough for Spillway's Ollama backend. */
@ExtendWith(EventLoopClient.class)
class SimulatedOllamaTest {
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final SimulatedOllama ollama =
      new SimulatedOllama("127.0.0.1", 0, clock, List.of("qwen2.5-coder:7b", "llama3.2:3b"), Duration.ZERO).start();
  final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    ollama.close();
    scheduler.shutdownNow();
  }

  @Test
  void versionAndTagsAreOllamaShaped() throws Exception {
    JsonNode version = Json.parse(SimHttp.get(ollama.baseUrl() + "/api/version", null).body());
    assertThat(version.path("version").asText()).isEqualTo(SimulatedOllama.VERSION);

    JsonNode tags = Json.parse(SimHttp.get(ollama.baseUrl() + "/api/tags", null).body());
    assertThat(tags.path("models").findValuesAsText("name")).containsExactly("qwen2.5-coder:7b", "llama3.2:3b");
  }

  static final String SHELL_TOOL = """
      {"type":"function","function":{"name":"shell","description":"Runs a shell command",
       "parameters":{"type":"object","properties":{"command":{"type":"array","items":{"type":"string"}},
       "workdir":{"type":"string"},"timeout_ms":{"type":"number"}},"required":["command"]}}}""";
  static final String READ_TOOL = """
      {"type":"function","function":{"name":"read_file","parameters":{"type":"object",
       "properties":{"path":{"type":"string"}},"required":["path"]}}}""";

  @Test
  void aRequestWithToolsIsAnsweredWithAToolCallInOllamasShape() throws Exception {
    for (boolean stream : new boolean[] {false, true}) {
      HttpResponse<String> response = SimHttp.post(ollama.baseUrl() + "/api/chat", null,
          "{\"model\":\"qwen2.5-coder:7b\",\"stream\":" + stream + ",\"tools\":[" + READ_TOOL + "," + SHELL_TOOL
              + "],\"messages\":[{\"role\":\"system\",\"content\":\"You are an agent\"},"
              + "{\"role\":\"user\",\"content\":\"list the files\"}]}");

      String[] lines = response.body().split("\n");
      JsonNode first = Json.parse(lines[0]);
      JsonNode call = first.path("message").path("tool_calls").get(0);
      assertThat(call.path("id").asText()).startsWith("call_");
      assertThat(call.path("function").path("index").asInt()).isZero();
      assertThat(call.path("function").path("name").asText()).as("a shell tool is preferred").isEqualTo("shell");
      assertThat(call.path("function").path("arguments").path("command")).hasSize(1);
      assertThat(call.path("function").path("arguments").path("command").get(0).asText()).isEqualTo("ls");
      JsonNode last = Json.parse(lines[lines.length - 1]);
      assertThat(last.path("done").asBoolean()).isTrue();
      assertThat(last.path("done_reason").asText()).isEqualTo("stop");
      assertThat(lines.length).isEqualTo(stream ? 2 : 1);
    }
  }

  @Test
  void afterTheToolResultTheModelAnswersInTextAndANewTaskCallsAgain() throws Exception {
    String conversation = "{\"role\":\"user\",\"content\":\"list the files\"},"
        + "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_1\",\"function\":"
        + "{\"name\":\"shell\",\"arguments\":{\"command\":[\"ls\"]}}}]},"
        + "{\"role\":\"tool\",\"tool_name\":\"shell\",\"content\":\"README.md pom.xml\"}";

    JsonNode answer = Json.parse(SimHttp.post(ollama.baseUrl() + "/api/chat", null,
        "{\"model\":\"qwen2.5-coder:7b\",\"stream\":false,\"tools\":[" + SHELL_TOOL + "],\"messages\":["
            + conversation + "]}").body());
    assertThat(answer.path("message").has("tool_calls")).isFalse();
    assertThat(answer.path("message").path("content").asText()).contains("The tool printed: \"README.md pom.xml\"");

    JsonNode next = Json.parse(SimHttp.post(ollama.baseUrl() + "/api/chat", null,
        "{\"model\":\"qwen2.5-coder:7b\",\"stream\":false,\"tools\":[" + SHELL_TOOL + "],\"messages\":["
            + conversation + ",{\"role\":\"assistant\",\"content\":\"Done.\"},"
            + "{\"role\":\"user\",\"content\":\"now count them\"}]}").body());
    assertThat(next.path("message").path("tool_calls").get(0).path("function").path("name").asText())
        .isEqualTo("shell");
  }

  @Test
  void withoutToolsTheModelAlwaysAnswersInText() throws Exception {
    JsonNode answer = Json.parse(SimHttp.post(ollama.baseUrl() + "/api/chat", null,
        "{\"model\":\"qwen2.5-coder:7b\",\"stream\":false,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
        .body());
    assertThat(answer.path("message").has("tool_calls")).isFalse();
    assertThat(answer.path("message").path("content").asText()).contains("simulated Ollama");
  }

  @Test
  void chatStreamsNdjsonEndingInADoneLineWithCounts() throws Exception {
    HttpResponse<String> response = SimHttp.post(ollama.baseUrl() + "/api/chat", null,
        "{\"model\":\"llama3.2:3b\",\"messages\":[{\"role\":\"user\",\"content\":\"why is the sky blue?\"}]}");

    assertThat(response.headers().firstValue("content-type")).hasValue("application/x-ndjson");
    String[] lines = response.body().split("\n");
    assertThat(lines.length).isGreaterThan(3);
    for (int i = 0; i < lines.length - 1; i++) {
      JsonNode line = Json.parse(lines[i]);
      assertThat(line.path("done").asBoolean()).isFalse();
      assertThat(line.path("message").path("role").asText()).isEqualTo("assistant");
    }
    JsonNode last = Json.parse(lines[lines.length - 1]);
    assertThat(last.path("done").asBoolean()).isTrue();
    assertThat(last.path("done_reason").asText()).isEqualTo("stop");
    assertThat(last.path("prompt_eval_count").asInt()).isPositive();
    assertThat(last.path("eval_count").asInt()).isEqualTo(lines.length - 1);
  }

  @Test
  void numPredictCutsTheAnswerWithDoneReasonLength() throws Exception {
    JsonNode answer = Json.parse(SimHttp.post(ollama.baseUrl() + "/api/generate", null,
        "{\"model\":\"qwen2.5-coder:7b\",\"prompt\":\"count\",\"stream\":false,\"options\":{\"num_predict\":2}}").body());

    assertThat(answer.path("done_reason").asText()).isEqualTo("length");
    assertThat(answer.path("eval_count").asInt()).isEqualTo(2);
  }

  @Test
  void unknownModelsGetOllamas404() {
    HttpResponse<String> response = SimHttp.post(ollama.baseUrl() + "/api/chat", null,
        "{\"model\":\"mistral\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(response.body()).isEqualTo("{\"error\":\"model \\\"mistral\\\" not found, try pulling it first\"}");
  }

  @Test
  void spillwaysOllamaBackendFindsItReadyServesItAndKeepsItWarm() throws Exception {
    LocalConfig config = config();
    LocalBackend local = new LocalBackend(LocalBackends.server(config, CloudConfig.DEFAULTS,
        clock, new SimpleMeterRegistry(), EventLoopClient.http()), config, clock, scheduler, new SimpleMeterRegistry());

    assertThat(local.checkNow().missing()).isEmpty();
    assertThat(local.readiness().version()).isEqualTo(SimulatedOllama.VERSION);
    assertThat(local.ready()).isTrue();

    local.warmNow();
    assertThat(ollama.loadedUntil("qwen2.5-coder:7b")).isEqualTo(clock.instant().plus(Duration.ofMinutes(20)));
    JsonNode ps = Json.parse(SimHttp.get(ollama.baseUrl() + "/api/ps", null).body().getBytes(StandardCharsets.UTF_8));
    assertThat(ps.path("models").findValuesAsText("name")).contains("qwen2.5-coder:7b", "llama3.2:3b");

    GatewayResponse answer = Blocking.await(local.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hello local\"}]}")));
    JsonNode completion = Json.parse(answer.body());
    assertThat(completion.path("model").asText()).isEqualTo("llama3.2:3b");
    assertThat(completion.path("choices").get(0).path("message").path("content").asText()).contains("hello local");

    GatewayResponse streamed = Blocking.await(local.callAsync(request(Route.CHAT_COMPLETIONS,
        "{\"model\":\"gpt-4o\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")));
    List<SseEvent> events = new ArrayList<>();
    try (EventStream stream = streamed.stream()) {
      SseEvent event;
      while ((event = stream.next()) != null) {
        events.add(event);
      }
    }
    assertThat(events.get(events.size() - 1).isDone()).isTrue();
    assertThat(events).hasSizeGreaterThan(4);
  }

  private LocalConfig config() {
    Map<String, String> models = new LinkedHashMap<>();
    models.put("default", "qwen2.5-coder:7b");
    models.put("gpt-4o-mini", "llama3.2:3b");
    return new LocalConfig(true, LocalConfig.Kind.OLLAMA, ollama.baseUrl(), models, null, null, null, null);
  }

  static GatewayRequest request(Route route, String json) {
    try {
      return GatewayRequest.create("req_test", route, Headers.EMPTY, (ObjectNode) Json.parse(json),
          json.getBytes(StandardCharsets.UTF_8), java.time.Instant.now());
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
