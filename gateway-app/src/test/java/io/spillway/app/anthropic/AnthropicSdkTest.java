package io.spillway.app.anthropic;

import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static io.spillway.app.anthropic.AnthropicStubs.ollamaChats;
import static io.spillway.app.anthropic.AnthropicStubs.ollamaMessagesCalls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.JsonValue;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.errors.RateLimitException;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.ContentBlockParam;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCountTokensParams;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.StopReason;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolResultBlockParam;
import com.anthropic.models.messages.ToolUseBlock;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.matching.StringValuePattern;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.json.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The official Anthropic Java SDK ({@code com.anthropic:anthropic-java}) as a second client of the
 * Messages API, through the real gateway: buffered and streamed {@code messages.create}, a
 * {@code tool_use} round, {@code count_tokens} and a typed error, for every tier, on each backend:
 * the Anthropic cloud route (a stand-in), and local while an operator forces the breaker open, on
 * an Ollama that serves Anthropic's Messages API itself (0.14 and later) and on one that only has
 * {@code /api/chat} (Spillway translates).
 */
class AnthropicSdkTest {
  private static final String MODEL = "claude-sonnet-4-5";
  private static final String CLOUD_TEXT = "Hello from Claude.";
  private static final String LOCAL_TEXT = "Hello from the local model.";
  private static final String FINAL_TEXT = "The command printed HELLO.";
  private static final String TOOL_ID = "toolu_01sdk";

  /** Where the Messages calls are served. */
  enum Backend {
    CLOUD,
    /** Local, on an Ollama without {@code /v1/messages}: translated to {@code /api/chat}. */
    LOCAL_OVER_CHAT,
    /** Local, on an Ollama that serves {@code /v1/messages} itself: passed through. */
    LOCAL_NATIVE
  }

  @RegisterExtension
  final ClaudeRouteGateway gw = ClaudeRouteGateway.claudeOnly().startedByTheTest();

  static Stream<Arguments> tiersBackendsAndModes() {
    List<Arguments> all = new ArrayList<>();
    for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
      for (Backend backend : Backend.values()) {
        all.add(Arguments.of(key, backend, false));
        all.add(Arguments.of(key, backend, true));
      }
    }
    return all.stream();
  }

  @ParameterizedTest(name = "{0} on {1}, stream {2}")
  @MethodSource("tiersBackendsAndModes")
  void theAnthropicSdkGetsATextAnswerAToolUseRoundAndATokenCount(String key, Backend backend, boolean stream) {
    start(backend, "");
    AnthropicClient client = client(key);

    Message hello = create(client, MessageCreateParams.builder().model(MODEL).maxTokens(256)
        .system("You are terse.").addUserMessage("Say hello.").build(), stream);

    assertThat(hello.content()).isNotEmpty();
    assertThat(hello.content().get(0).text()).isPresent();
    assertThat(hello.content().get(0).text().get().text()).isEqualTo(backend == Backend.CLOUD ? CLOUD_TEXT : LOCAL_TEXT);
    assertThat(hello.stopReason()).hasValue(StopReason.END_TURN);
    assertThat(hello.usage().outputTokens()).isPositive();

    MessageCreateParams.Builder turn = MessageCreateParams.builder().model(MODEL).maxTokens(512).addTool(bash())
        .addUserMessage("Run echo HELLO");
    Message call = create(client, turn.build(), stream);

    assertThat(call.stopReason()).hasValue(StopReason.TOOL_USE);
    ToolUseBlock use = call.content().stream().filter(b -> b.toolUse().isPresent()).findFirst().orElseThrow()
        .toolUse().get();
    assertThat(use.name()).isEqualTo("Bash");
    assertThat(use._input().convert(Map.class)).containsEntry("command", "echo HELLO");

    Message answer = create(client, turn.addMessage(call).addUserMessageOfContentBlockParams(List.of(
        ContentBlockParam.ofToolResult(ToolResultBlockParam.builder().toolUseId(use.id()).content("HELLO").build())))
        .build(), stream);

    assertThat(answer.content().get(0).text().get().text()).isEqualTo(FINAL_TEXT);
    assertThat(answer.stopReason()).hasValue(StopReason.END_TURN);
    switch (backend) {
      case CLOUD -> assertThat(ollamaChats(gw.h.ollama)).isEmpty();
      case LOCAL_OVER_CHAT -> {
        assertThat(ollamaChats(gw.h.ollama)).hasSize(3);
        assertThat(ollamaMessagesCalls(gw.h.ollama)).isEmpty();
      }
      case LOCAL_NATIVE -> {
        List<JsonNode> sent = ollamaMessagesCalls(gw.h.ollama);
        assertThat(sent).hasSize(3).allSatisfy(body -> {
          assertThat(body.path("model").asText()).as("the model is mapped").isEqualTo(AnthropicStubs.OLLAMA_MODEL);
          assertThat(body.path("stream").asBoolean(false)).isEqualTo(stream);
        });
        assertThat(sent.get(2).toString()).as("the tool result passed through as sent").contains("tool_result");
        assertThat(ollamaChats(gw.h.ollama)).isEmpty();
      }
    }

    long counted = client.messages().countTokens(MessageCountTokensParams.builder().model(MODEL).addTool(bash())
        .addUserMessage("Count the tokens of this sentence, please.").build()).inputTokens();
    assertThat(counted).isBetween(10L, 400L);
    assertThat(gw.anthropic.findAll(postRequestedFor(urlPathEqualTo("/v1/messages/count_tokens"))))
        .as("the gateway counts itself").isEmpty();
  }

  @ParameterizedTest(name = "{0}, stream {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void aCallerOverItsPoolGetsTheSdksRateLimitExceptionFromAnAnthropicShapedError(String key, boolean stream) {
    start(Backend.CLOUD, """
        quota:
          monthlyTokens: 2000
        """);
    AnthropicClient client = client(key);
    MessageCreateParams params = MessageCreateParams.builder().model(MODEL).maxTokens(4_000)
        .addUserMessage("Write a long essay.").build();

    assertThatThrownBy(() -> create(client, params, stream))
        .isInstanceOfSatisfying(RateLimitException.class, e -> {
          assertThat(e.statusCode()).isEqualTo(429);
          assertThat(e.headers().values("retry-after")).isNotEmpty();
          assertThat(e.body().toString()).contains("rate_limit_error");
        });
    assertThat(gw.anthropic.getAllServeEvents()).as("refused before any backend").isEmpty();
  }

  private void start(Backend backend, String extraYaml) {
    gw.start(extraYaml);
    AnthropicStubs.ollamaReady(gw.h.ollama);
    switch (backend) {
      case CLOUD -> {
        stubCloud(containing("tool_result"), AnthropicStubs.messageStream(MODEL, FINAL_TEXT),
            AnthropicStubs.message(MODEL, FINAL_TEXT), 1);
        stubCloud(matchingJsonPath("$.tools"), AnthropicStubs.toolUseStream(MODEL, TOOL_ID, "Bash", command()),
            AnthropicStubs.toolUse(MODEL, TOOL_ID, "Bash", command()), 3);
        stubCloud(null, AnthropicStubs.messageStream(MODEL, CLOUD_TEXT), AnthropicStubs.message(MODEL, CLOUD_TEXT), 5);
      }
      case LOCAL_OVER_CHAT -> {
        AnthropicStubs.ollamaChat(gw.h.ollama, 1, matchingJsonPath("$.messages[?(@.role == 'tool')]"),
            AnthropicStubs.textLines(FINAL_TEXT));
        AnthropicStubs.ollamaChat(gw.h.ollama, 3, matchingJsonPath("$.tools"),
            AnthropicStubs.toolCallLines("Bash", command()));
        AnthropicStubs.ollamaChat(gw.h.ollama, 5, null, AnthropicStubs.textLines(LOCAL_TEXT));
      }
      case LOCAL_NATIVE -> {
        String local = AnthropicStubs.OLLAMA_MODEL;
        AnthropicStubs.ollamaServesMessages(gw.h.ollama);
        AnthropicStubs.ollamaMessages(gw.h.ollama, 2, containing("tool_result"),
            AnthropicStubs.messageStream(local, FINAL_TEXT), AnthropicStubs.message(local, FINAL_TEXT));
        AnthropicStubs.ollamaMessages(gw.h.ollama, 4, matchingJsonPath("$.tools"),
            AnthropicStubs.toolUseStream(local, TOOL_ID, "Bash", command()),
            AnthropicStubs.toolUse(local, TOOL_ID, "Bash", command()));
        AnthropicStubs.ollamaMessages(gw.h.ollama, 6, null, AnthropicStubs.messageStream(local, LOCAL_TEXT),
            AnthropicStubs.message(local, LOCAL_TEXT));
      }
    }
    gw.h.gateway().local().checkNow(); // what the start-up probe learns, with the stand-in now answering
    if (backend != Backend.CLOUD) {
      ClaudeRouteGateway.forceBreakerOpen(gw.h);
    }
  }

  private void stubCloud(StringValuePattern body,
      ResponseDefinitionBuilder streamed,
      ResponseDefinitionBuilder whole, int priority) {
    var stream = post("/v1/messages").atPriority(priority).withRequestBody(matchingJsonPath("$[?(@.stream == true)]"));
    var buffered = post("/v1/messages").atPriority(priority + 1);
    if (body != null) {
      stream = stream.withRequestBody(body);
      buffered = buffered.withRequestBody(body);
    }
    gw.anthropic.stubFor(stream.willReturn(streamed));
    gw.anthropic.stubFor(buffered.willReturn(whole));
  }

  /** The tool input the stand-ins answer with. */
  private static ObjectNode command() {
    return Json.object().put("command", "echo HELLO");
  }

  private AnthropicClient client(String key) {
    return AnthropicOkHttpClient.builder().baseUrl("http://127.0.0.1:" + gw.h.gateway().port()).apiKey(key)
        .maxRetries(0).timeout(Duration.ofSeconds(20)).build();
  }

  /** {@code messages.create}, or its stream gathered by the SDK's own accumulator. */
  private static Message create(AnthropicClient client, MessageCreateParams params, boolean stream) {
    if (!stream) {
      return client.messages().create(params);
    }
    MessageAccumulator accumulator = MessageAccumulator.create();
    try (StreamResponse<RawMessageStreamEvent> events = client.messages().createStreaming(params)) {
      events.stream().forEach(accumulator::accumulate);
    }
    return accumulator.message();
  }

  private static Tool bash() {
    return Tool.builder().name("Bash").description("Runs a shell command").inputSchema(Tool.InputSchema.builder()
        .properties(JsonValue.from(Map.of("command", Map.of("type", "string")))).required(List.of("command")).build())
        .build();
  }
}
