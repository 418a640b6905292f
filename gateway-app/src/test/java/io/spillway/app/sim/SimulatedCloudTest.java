package io.spillway.app.sim;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.models.ChatModel;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import io.spillway.core.json.Json;
import io.spillway.core.testing.FakeClock;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The simulated cloud answers like OpenAI, and goes at capacity on its schedule (fake clock). */
class SimulatedCloudTest {
  static final String KEY = "sk-simulated-cloud";
  final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  final SimulatedCloud cloud = new SimulatedCloud("127.0.0.1", 0, clock,
      CapacitySchedule.startingNow(clock, Duration.ofSeconds(20), Duration.ofSeconds(40)), KEY, Duration.ZERO).start();
  final OpenAIClient sdk = OpenAIOkHttpClient.builder().baseUrl(cloud.baseUrl()).apiKey(KEY).maxRetries(0).build();

  @AfterEach
  void stop() {
    cloud.close();
  }

  @Test
  void chatAnswersAreOpenAiShapedWithUsage() {
    ChatCompletion completion = sdk.chat().completions().create(
        ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O_MINI).addUserMessage("Hello cloud").build());

    assertThat(completion.choices().get(0).message().content().orElseThrow())
        .contains("simulated cloud").contains("gpt-4o-mini").contains("Hello cloud");
    assertThat(completion.usage().orElseThrow().totalTokens()).isPositive();
  }

  @Test
  void chatStreamsArriveChunkByChunkAndSayTheSameAsTheWholeAnswer() {
    ChatCompletionCreateParams params =
        ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O).addUserMessage("Stream please").build();
    String whole = sdk.chat().completions().create(params).choices().get(0).message().content().orElseThrow();

    try (StreamResponse<ChatCompletionChunk> stream = sdk.chat().completions().createStreaming(params)) {
      List<ChatCompletionChunk> chunks = stream.stream().toList();
      assertThat(chunks.size()).isGreaterThan(3);
      String text = chunks.stream().flatMap(c -> c.choices().stream())
          .map(c -> c.delta().content().orElse("")).collect(Collectors.joining());
      assertThat(text).isEqualTo(whole);
    }
  }

  @Test
  void includeUsageAddsAUsageChunkBeforeDone() throws Exception {
    HttpResponse<String> response = SimHttp.post(cloud.baseUrl() + "/chat/completions", KEY,
        "{\"model\":\"gpt-4o\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");

    List<String> data = Arrays.stream(response.body().split("\n\n")).map(e -> e.substring("data: ".length())).toList();
    assertThat(data.get(data.size() - 1)).isEqualTo("[DONE]");
    JsonNode usage = Json.parse(data.get(data.size() - 2));
    assertThat(usage.path("choices").isEmpty()).isTrue();
    assertThat(usage.path("usage").path("total_tokens").asInt()).isPositive();
    assertThat(Json.parse(data.get(0)).path("usage").isNull()).isTrue();
  }

  @Test
  void aStreamedResponseCarriesOpenAisWholeEventSequence() throws Exception {
    HttpResponse<String> response = SimHttp.post(cloud.baseUrl() + "/responses", KEY,
        "{\"model\":\"gpt-4.1\",\"stream\":true,\"input\":\"Explain rivers\"}");

    List<JsonNode> events = Arrays.stream(response.body().split("\n\n")).map(SimulatedCloudTest::data).toList();
    List<String> types = events.stream().map(e -> e.path("type").asText()).toList();
    int deltas = (int) types.stream().filter("response.output_text.delta"::equals).count();
    assertThat(deltas).isGreaterThan(3);
    List<String> expected = new java.util.ArrayList<>(List.of("response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added"));
    expected.addAll(java.util.Collections.nCopies(deltas, "response.output_text.delta"));
    expected.addAll(List.of("response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.completed"));
    assertThat(types).isEqualTo(expected);
    for (int i = 0; i < events.size(); i++) {
      assertThat(events.get(i).path("sequence_number").asInt()).isEqualTo(i);
    }
    String text = events.stream().filter(e -> e.path("type").asText().equals("response.output_text.delta"))
        .map(e -> e.path("delta").asText()).collect(Collectors.joining());
    JsonNode itemDone = events.get(events.size() - 2);
    assertThat(itemDone.path("item").path("status").asText()).isEqualTo("completed");
    assertThat(itemDone.path("item").path("content").get(0).path("text").asText()).isEqualTo(text);
    assertThat(events.get(events.size() - 3).path("part").path("text").asText()).isEqualTo(text);
    JsonNode completed = events.get(events.size() - 1).path("response");
    assertThat(completed.path("status").asText()).isEqualTo("completed");
    assertThat(completed.path("output").get(0).path("content").get(0).path("text").asText()).isEqualTo(text);
    assertThat(completed.path("usage").path("total_tokens").asInt()).isPositive();
  }

  @Test
  void theSdkReadsTheStreamedResponseIntoTheSameText() {
    ResponseCreateParams params = ResponseCreateParams.builder().model(ChatModel.GPT_4_1).input("Explain rivers").build();
    String whole = sdk.responses().create(params).output().get(0).asMessage().content().get(0).asOutputText().text();
    try (StreamResponse<com.openai.models.responses.ResponseStreamEvent> stream =
        sdk.responses().createStreaming(params)) {
      List<com.openai.models.responses.ResponseStreamEvent> events = stream.stream().toList();
      assertThat(events).anySatisfy(e -> assertThat(e.isContentPartAdded()).isTrue());
      assertThat(events).anySatisfy(e -> assertThat(e.isContentPartDone()).isTrue());
      assertThat(events.stream().filter(e -> e.isOutputItemDone()).map(e -> e.asOutputItemDone().item().asMessage()
          .content().get(0).asOutputText().text())).containsExactly(whole);
      assertThat(events.get(events.size() - 1).asCompleted().response().usage().orElseThrow().totalTokens())
          .isPositive();
    }
  }

  static final String SHELL_TOOL = "{\"type\":\"function\",\"function\":{\"name\":\"shell\",\"parameters\":"
      + "{\"type\":\"object\",\"properties\":{\"command\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},"
      + "\"required\":[\"command\"]}}}";

  @Test
  void aChatRequestWithToolsGetsAShellCallThenTextFromTheToolsOutput() throws Exception {
    String task = "{\"role\":\"user\",\"content\":\"What is in this folder?\"}";
    ChatCompletion call = sdk.chat().completions().create(ChatCompletionCreateParams.builder().model(ChatModel.GPT_4O)
        .addUserMessage("What is in this folder?")
        .addTool(com.openai.models.chat.completions.ChatCompletionFunctionTool.builder()
            .function(com.openai.models.FunctionDefinition.builder().name("shell")
                .parameters(com.openai.models.FunctionParameters.builder()
                    .putAdditionalProperty("type", com.openai.core.JsonValue.from("object"))
                    .putAdditionalProperty("properties", com.openai.core.JsonValue.from(java.util.Map.of("command",
                        java.util.Map.of("type", "array", "items", java.util.Map.of("type", "string")))))
                    .putAdditionalProperty("required", com.openai.core.JsonValue.from(List.of("command")))
                    .build())
                .build())
            .build())
        .build());

    assertThat(call.choices().get(0).finishReason())
        .isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
    var toolCall = call.choices().get(0).message().toolCalls().orElseThrow().get(0).asFunction();
    assertThat(toolCall.function().name()).isEqualTo("shell");
    assertThat(Json.parse(toolCall.function().arguments()).path("command").get(0).asText()).isEqualTo("ls");

    HttpResponse<String> streamed = SimHttp.post(cloud.baseUrl() + "/chat/completions", KEY,
        "{\"model\":\"gpt-4o\",\"stream\":true,\"tools\":[" + SHELL_TOOL + "],\"messages\":[" + task + "]}");
    List<JsonNode> chunks = Arrays.stream(streamed.body().split("\n\n")).filter(e -> !e.equals("data: [DONE]"))
        .map(SimulatedCloudTest::data).toList();
    JsonNode opening = chunks.get(0).path("choices").get(0).path("delta").path("tool_calls").get(0);
    assertThat(opening.path("id").asText()).isEqualTo(toolCall.id());
    assertThat(opening.path("function").path("name").asText()).isEqualTo("shell");
    assertThat(chunks.get(1).path("choices").get(0).path("delta").path("tool_calls").get(0).path("function")
        .path("arguments").asText()).isEqualTo(toolCall.function().arguments());
    assertThat(chunks.get(chunks.size() - 1).path("choices").get(0).path("finish_reason").asText())
        .isEqualTo("tool_calls");

    HttpResponse<String> answer = SimHttp.post(cloud.baseUrl() + "/chat/completions", KEY,
        "{\"model\":\"gpt-4o\",\"tools\":[" + SHELL_TOOL + "],\"messages\":[" + task + ",{\"role\":\"assistant\","
            + "\"content\":null,\"tool_calls\":[{\"id\":\"" + toolCall.id() + "\",\"type\":\"function\",\"function\":"
            + "{\"name\":\"shell\",\"arguments\":\"{}\"}}]},{\"role\":\"tool\",\"tool_call_id\":\"" + toolCall.id()
            + "\",\"content\":\"README.md src\"}]}");
    JsonNode done = Json.parse(answer.body()).path("choices").get(0);
    assertThat(done.path("finish_reason").asText()).isEqualTo("stop");
    assertThat(done.path("message").path("content").asText()).contains("The tool printed: \"README.md src\"");
  }

  @Test
  void codexsFirstTurnGetsAnExecCommandCallAndItsNextTurnTextFromTheCommandsOutput() throws Exception {
    HttpResponse<String> first = SimHttp.post(cloud.baseUrl() + "/responses", KEY, codexFixture("first-turn.json"));

    List<JsonNode> events = Arrays.stream(first.body().split("\n\n")).map(SimulatedCloudTest::data).toList();
    assertThat(events.stream().map(e -> e.path("type").asText())).containsExactly("response.created",
        "response.in_progress", "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done", "response.completed");
    for (int i = 0; i < events.size(); i++) {
      assertThat(events.get(i).path("sequence_number").asInt()).isEqualTo(i);
    }
    JsonNode call = events.get(5).path("item");
    assertThat(call.path("type").asText()).isEqualTo("function_call");
    assertThat(call.path("name").asText()).isEqualTo("exec_command");
    assertThat(call.path("call_id").asText()).startsWith("call_");
    assertThat(Json.parse(call.path("arguments").asText()).path("cmd").asText()).isEqualTo("ls");
    assertThat(events.get(2).path("item").path("arguments").asText()).isEmpty();
    JsonNode completed = events.get(6).path("response");
    assertThat(completed.path("output")).containsExactly(call);
    assertThat(completed.path("store").asBoolean()).as("Codex sends store:false").isFalse();

    HttpResponse<String> next = SimHttp.post(cloud.baseUrl() + "/responses", KEY,
        codexFixture("turn-with-function-call-output.json"));
    JsonNode answer = data(next.body().split("\n\n")[next.body().split("\n\n").length - 1]).path("response");
    assertThat(answer.path("output").get(0).path("type").asText()).isEqualTo("message");
    assertThat(answer.path("output").get(0).path("content").get(0).path("text").asText())
        .contains("The tool printed:").contains("hello-from-tool");
  }

  @Test
  void theSdkReadsAStreamedFunctionCallAndItsIdsAreUniquePerAnswer() {
    ResponseCreateParams params = ResponseCreateParams.builder().model(ChatModel.GPT_4_1).input("List the files")
        .addTool(com.openai.models.responses.FunctionTool.builder().name("exec_command").strict(false)
            .parameters(com.openai.models.responses.FunctionTool.Parameters.builder()
                .putAdditionalProperty("type", com.openai.core.JsonValue.from("object"))
                .putAdditionalProperty("properties", com.openai.core.JsonValue.from(
                    java.util.Map.of("cmd", java.util.Map.of("type", "string"))))
                .putAdditionalProperty("required", com.openai.core.JsonValue.from(List.of("cmd")))
                .build())
            .build())
        .build();
    Response whole = sdk.responses().create(params);
    assertThat(whole.output().get(0).asFunctionCall().name()).isEqualTo("exec_command");
    try (StreamResponse<com.openai.models.responses.ResponseStreamEvent> stream =
        sdk.responses().createStreaming(params)) {
      List<com.openai.models.responses.ResponseStreamEvent> events = stream.stream().toList();
      assertThat(events.stream().filter(e -> e.isFunctionCallArgumentsDone())
          .map(e -> e.asFunctionCallArgumentsDone().arguments())).containsExactly("{\"cmd\":\"ls\"}");
      Response streamed = events.get(events.size() - 1).asCompleted().response();
      assertThat(streamed.output().get(0).asFunctionCall().arguments()).isEqualTo("{\"cmd\":\"ls\"}");
      assertThat(streamed.id()).isNotEqualTo(whole.id());
      assertThat(streamed.output().get(0).asFunctionCall().id()).isNotEqualTo(whole.output().get(0).asFunctionCall().id());
    }
  }

  private static String codexFixture(String name) throws java.io.IOException {
    try (java.io.InputStream in = SimulatedCloudTest.class.getResourceAsStream("/fixtures/codex/" + name)) {
      assertThat(in).as(name).isNotNull();
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  private static JsonNode data(String event) {
    String line = event.lines().filter(l -> l.startsWith("data: ")).findFirst().orElseThrow();
    try {
      return Json.parse(line.substring("data: ".length()));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void completionsAndResponsesAreServedToo() {
    Completion completion = sdk.completions().create(CompletionCreateParams.builder()
        .model(CompletionCreateParams.Model.GPT_3_5_TURBO_INSTRUCT).prompt("Say this is a test").build());
    assertThat(completion.choices().get(0).text()).contains("simulated cloud");

    Response response = sdk.responses().create(ResponseCreateParams.builder()
        .model(ChatModel.GPT_4_1).input("Why is the sky blue?").build());
    String text = response.output().get(0).asMessage().content().get(0).asOutputText().text();
    assertThat(text).contains("Why is the sky blue?");
    assertThat(response.usage().orElseThrow().totalTokens()).isPositive();
  }

  @Test
  void goesAtCapacityOnItsScheduleWithOpenAisBodyAndComesBack() throws Exception {
    String chat = "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    assertThat(SimHttp.post(cloud.baseUrl() + "/chat/completions", KEY, chat).statusCode()).isEqualTo(200);

    clock.advance(Duration.ofSeconds(19));
    assertThat(SimHttp.post(cloud.baseUrl() + "/chat/completions", KEY, chat).statusCode()).isEqualTo(200);

    clock.advance(Duration.ofSeconds(1));
    HttpResponse<String> atCapacity = SimHttp.post(cloud.baseUrl() + "/chat/completions", KEY, chat);
    assertThat(atCapacity.statusCode()).isEqualTo(503);
    assertThat(atCapacity.body()).isEqualTo(SimulatedCloud.AT_CAPACITY_BODY);
    assertThat(Json.parse(atCapacity.body()).path("error").path("message").asText())
        .isEqualTo("Selected model is at capacity. Please try a different model.");
    JsonNode status = Json.parse(SimHttp.get(cloud.baseUrl().replace("/v1", "/sim/status"), null).body());
    assertThat(status.path("state").asText()).isEqualTo("at_capacity");
    assertThat(status.path("nextChangeAt").asText()).isEqualTo("2026-11-10T10:01:00Z");

    clock.advance(Duration.ofSeconds(39));
    assertThat(SimHttp.post(cloud.baseUrl() + "/responses", KEY, "{\"model\":\"gpt-4o\",\"input\":\"hi\"}")
        .statusCode()).isEqualTo(503);

    clock.advance(Duration.ofSeconds(1));
    assertThat(SimHttp.post(cloud.baseUrl() + "/chat/completions", KEY, chat).statusCode()).isEqualTo(200);
  }

  @Test
  void aWrongKeyGets401() {
    HttpResponse<String> response = SimHttp.post(cloud.baseUrl() + "/chat/completions", "sk-wrong",
        "{\"model\":\"gpt-4o\",\"messages\":[]}");

    assertThat(response.statusCode()).isEqualTo(401);
    assertThat(response.body()).contains("invalid_api_key");
  }

  @Test
  void scheduleRepeatsAndNeverWhenCapacityTimeIsZero() {
    Instant start = Instant.parse("2026-11-10T10:00:00Z");
    CapacitySchedule schedule = new CapacitySchedule(start, Duration.ofSeconds(20), Duration.ofSeconds(25));
    assertThat(schedule.atCapacity(start)).isFalse();
    assertThat(schedule.atCapacity(start.plusSeconds(20))).isTrue();
    assertThat(schedule.atCapacity(start.plusSeconds(44))).isTrue();
    assertThat(schedule.atCapacity(start.plusSeconds(45))).isFalse();
    assertThat(schedule.atCapacity(start.plusSeconds(65))).isTrue();
    assertThat(schedule.nextChange(start.plusSeconds(30))).isEqualTo(start.plusSeconds(45));

    CapacitySchedule never = new CapacitySchedule(start, Duration.ofSeconds(20), Duration.ZERO);
    assertThat(never.atCapacity(start.plusSeconds(3600))).isFalse();
    assertThat(never.nextChange(start)).isNull();
  }
}
