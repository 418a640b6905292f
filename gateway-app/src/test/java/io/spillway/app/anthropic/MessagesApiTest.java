package io.spillway.app.anthropic;

import static io.spillway.app.anthropic.MessagesAnswers.eventNames;
import static io.spillway.app.anthropic.MessagesAnswers.text;
import static com.github.tomakehurst.wiremock.client.WireMock.absent;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.spillway.app.anthropic.AnthropicStubs.ollamaChats;
import static io.spillway.app.anthropic.AnthropicStubs.parse;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.json.Json;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Anthropic's Messages API through the real gateway: an OpenAI route ({@code openai}), an Anthropic
 * route ({@code claude}, a WireMock stand-in that checks its key and version headers) and a stand-in
 * Ollama behind them. Claude Code's requests go to the Anthropic route while it is healthy, to the
 * local model (translated to {@code /api/chat}) when it is overloaded, and never to the OpenAI route.
 */
class MessagesApiTest {
  private static final String MODEL = "claude-sonnet-4-5";
  private static final String VERSION = "2023-06-01";
  private static final String BETA = "claude-code-20250219";
  private static final String TOOLS = """
      [{"name":"Bash","description":"Runs a shell command","input_schema":{"type":"object",
        "properties":{"command":{"type":"string"}},"required":["command"]}}]""";

  @RegisterExtension
  final ClaudeRouteGateway gw = ClaudeRouteGateway.withOpenAiRoute();

  @BeforeEach
  void ollamaIsReady() {
    AnthropicStubs.ollamaReady(gw.h.ollama);
  }

  @ParameterizedTest(name = "{0}, stream {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void anthropicRouteServesMessagesWithItsOwnKeyAndTheClientsVersionAndBeta(String key, boolean stream) {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(stream
        ? AnthropicStubs.messageStream(MODEL, "Hello from Claude.") : AnthropicStubs.message(MODEL, "Hello from Claude.")));

    HttpResponse<String> answer = messages(key, body("Say hello.", stream));

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("cloud");
    assertThat(answer.headers().firstValue("x-spillway-route")).hasValue("claude");
    assertThat(answer.headers().firstValue("request-id")).isEqualTo(answer.headers().firstValue("x-request-id"));
    assertThat(answer.body()).contains("Hello from Claude.");
    gw.anthropic.verify(1, postRequestedFor(urlEqualTo("/v1/messages"))
        .withHeader("x-api-key", equalTo(ClaudeRouteGateway.ANTHROPIC_KEY))
        .withHeader("anthropic-version", equalTo(VERSION))
        .withHeader("anthropic-beta", equalTo(BETA))
        .withHeader("Authorization", absent()));
    assertThat(gw.openai.getAllServeEvents()).as("the OpenAI route never sees a Messages request").isEmpty();
  }

  @Test
  void theRouteSendsItsAnthropicVersionWhenTheClientSendsNone() {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(AnthropicStubs.message(MODEL, "ok")));

    HttpResponse<String> answer = gw.h.post("/v1/messages", null, body("Say hello.", false), "x-api-key",
        GatewayHarness.SILVER_KEY);

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    gw.anthropic.verify(postRequestedFor(urlEqualTo("/v1/messages")).withHeader("anthropic-version", equalTo(VERSION)));
  }

  @ParameterizedTest(name = "{0}, stream {1}")
  @MethodSource("io.spillway.app.anthropic.ClaudeRouteGateway#tiersAndModes")
  void overloadedAnswersOpenTheAnthropicRoutesBreakerAndLocalServesEveryRequestMeanwhile(String key, boolean stream) {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(AnthropicStubs.overloaded529()));
    AnthropicStubs.ollamaChat(gw.h.ollama, 5, null, AnthropicStubs.textLines("Served by the local model."));

    for (int i = 0; i < 4; i++) {
      HttpResponse<String> answer = messages(key, body("Say hello.", stream));
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(text(answer.body())).isEqualTo("Served by the local model.");
    }

    gw.anthropic.verify(3, postRequestedFor(urlEqualTo("/v1/messages")));
    assertThat(routeState("claude")).isEqualTo("open");
    assertThat(routeState("openai")).as("the OpenAI route's breaker counts only its own answers").isEqualTo("closed");
  }

  @Test
  void anOverloadedErrorEventBeforeAnyContentIsCapacityAndTheRequestIsServedLocally() {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(AnthropicStubs.overloadedMidStream(MODEL)));
    AnthropicStubs.ollamaChat(gw.h.ollama, 5, null, AnthropicStubs.textLines("Local after all."));

    HttpResponse<String> answer = messages(GatewayHarness.SILVER_KEY, body("Say hello.", true));

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("local");
    assertThat(text(answer.body())).isEqualTo("Local after all.");
    assertThat(answer.body()).doesNotContain("overloaded_error").doesNotContain("msg_cloud_2");
  }

  @Test
  void aRateLimitErrorIsPassedOnWithItsRetryAfterAndDoesNotCountTowardTheStreak() {
    gw.anthropic.stubFor(post("/v1/messages").willReturn(AnthropicStubs.rateLimited(7)));

    for (int i = 0; i < 4; i++) {
      HttpResponse<String> answer = messages(GatewayHarness.BRONZE_KEY, body("Say hello.", false));
      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(429);
      assertThat(answer.headers().firstValue("retry-after")).hasValue("7");
      JsonNode error = parse(answer.body());
      assertThat(error.path("type").asText()).isEqualTo("error");
      assertThat(error.path("error").path("type").asText()).isEqualTo("rate_limit_error");
    }
    assertThat(routeState("claude")).isEqualTo("closed");
    assertThat(ollamaChats(gw.h.ollama)).isEmpty();
  }

  @Test
  void aStreamOnLocalComesInAnthropicsEventOrderWithUsage() {
    ClaudeRouteGateway.forceBreakerOpen(gw.h);
    AnthropicStubs.ollamaChat(gw.h.ollama, 5, null, AnthropicStubs.textLines("One two three."));

    HttpResponse<String> answer = messages(GatewayHarness.SILVER_KEY, body("Count.", true));

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    List<String> names = eventNames(answer.body());
    assertThat(names.subList(0, 3)).containsExactly("message_start", "ping", "content_block_start");
    assertThat(names.subList(names.size() - 3, names.size()))
        .containsExactly("content_block_stop", "message_delta", "message_stop");
    assertThat(names).filteredOn("content_block_delta"::equals).hasSize(3);
    JsonNode delta = eventData(answer.body(), "message_delta");
    assertThat(delta.path("delta").path("stop_reason").asText()).isEqualTo("end_turn");
    assertThat(delta.path("usage").path("input_tokens").asInt()).isEqualTo(1_480);
    assertThat(delta.path("usage").path("output_tokens").asInt()).isEqualTo(3);
    JsonNode chat = ollamaChats(gw.h.ollama).get(0);
    assertThat(chat.path("model").asText()).isEqualTo(AnthropicStubs.OLLAMA_MODEL);
    assertThat(chat.path("messages").get(0).path("role").asText()).isEqualTo("system");
  }

  @Test
  void aToolUseRoundTripsThroughTheLocalModelAndThinkingIsDroppedAndNamed() {
    ClaudeRouteGateway.forceBreakerOpen(gw.h);
    AnthropicStubs.ollamaChat(gw.h.ollama, 1, matchingJsonPath("$.messages[?(@.role == 'tool')]"),
        AnthropicStubs.textLines("The command printed HELLO."));
    AnthropicStubs.ollamaChat(gw.h.ollama, 5, null,
        AnthropicStubs.toolCallLines("Bash", Json.object().put("command", "echo HELLO")));

    HttpResponse<String> first = messages(GatewayHarness.BRONZE_KEY, """
        {"model":"%s","max_tokens":512,"tools":%s,
         "messages":[{"role":"user","content":"Run echo HELLO"}]}""".formatted(MODEL, TOOLS));

    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    JsonNode call = parse(first.body());
    assertThat(call.path("stop_reason").asText()).isEqualTo("tool_use");
    JsonNode use = call.path("content").get(0);
    assertThat(use.path("type").asText()).isEqualTo("tool_use");
    assertThat(use.path("name").asText()).isEqualTo("Bash");
    assertThat(use.path("input").path("command").asText()).isEqualTo("echo HELLO");

    HttpResponse<String> second = messages(GatewayHarness.BRONZE_KEY, """
        {"model":"%s","max_tokens":512,"tools":%s,"messages":[
          {"role":"user","content":"Run echo HELLO"},
          {"role":"assistant","content":[{"type":"thinking","thinking":"I should run it.","signature":"c2ln"},
            {"type":"tool_use","id":"%s","name":"Bash","input":{"command":"echo HELLO"}}]},
          {"role":"user","content":[{"type":"tool_result","tool_use_id":"%s","content":"HELLO"}]}]}"""
        .formatted(MODEL, TOOLS, use.path("id").asText(), use.path("id").asText()));

    assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
    assertThat(parse(second.body()).path("content").get(0).path("text").asText()).isEqualTo("The command printed HELLO.");
    assertThat(second.headers().firstValue("x-spillway-dropped-params")).hasValue("thinking");
    JsonNode chat = ollamaChats(gw.h.ollama).get(1);
    JsonNode tool = chat.path("messages").get(chat.path("messages").size() - 1);
    assertThat(tool.path("role").asText()).isEqualTo("tool");
    assertThat(tool.path("content").asText()).isEqualTo("HELLO");
    assertThat(chat.path("tools").get(0).path("function").path("name").asText()).isEqualTo("Bash");
  }

  @Test
  void errorsAreInAnthropicsShapeWithTheMatchingStatusAndRequestId() {
    HttpResponse<String> noKey = gw.h.post("/v1/messages", null, body("Hi", false));
    assertThat(noKey.statusCode()).isEqualTo(401);
    assertThat(parse(noKey.body()).path("error").path("type").asText()).isEqualTo("authentication_error");
    assertThat(parse(noKey.body()).path("type").asText()).isEqualTo("error");
    assertThat(noKey.headers().firstValue("request-id")).isPresent();

    HttpResponse<String> noMaxTokens = messages(GatewayHarness.GOLD_KEY,
        "{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
    assertThat(noMaxTokens.statusCode()).isEqualTo(400);
    assertThat(parse(noMaxTokens.body()).path("error").path("type").asText()).isEqualTo("invalid_request_error");
    assertThat(parse(noMaxTokens.body()).path("error").path("message").asText()).contains("max_tokens");
  }

  @Test
  void aDocumentBlockIsRefusedOnLocalNamingTheMessagesApi() {
    ClaudeRouteGateway.forceBreakerOpen(gw.h);
    HttpResponse<String> answer = messages(GatewayHarness.GOLD_KEY, """
        {"model":"%s","max_tokens":64,"messages":[{"role":"user","content":[
          {"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}}]}]}"""
        .formatted(MODEL));

    // Forced local by an operator, the cloud is not tried: the refusal is final.
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
    JsonNode error = parse(answer.body());
    assertThat(error.path("error").path("type").asText()).isEqualTo("invalid_request_error");
    assertThat(error.path("error").path("message").asText()).contains("Messages API").contains("documents");
    assertThat(ollamaChats(gw.h.ollama)).isEmpty();
  }

  @Test
  void claudeCodesRealTurnGoesToTheAnthropicRouteByteForByte() throws java.io.IOException {
    String turn = claudeCodeTurn();
    gw.anthropic.stubFor(post("/v1/messages").willReturn(AnthropicStubs.messageStream(MODEL, "ok")));

    HttpResponse<String> answer = messages(GatewayHarness.SILVER_KEY, turn);

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(gw.anthropic.findAll(postRequestedFor(urlEqualTo("/v1/messages"))).get(0).getBodyAsString())
        .isEqualTo(turn);
  }

  @Test
  void claudeCodesRealTurnIsServedLocallyWithWhatLocalCannotDoNamed() throws java.io.IOException {
    ClaudeRouteGateway.forceBreakerOpen(gw.h);
    AnthropicStubs.ollamaChat(gw.h.ollama, 5, null, AnthropicStubs.textLines("Hello from the local model."));

    HttpResponse<String> answer = messages(GatewayHarness.BRONZE_KEY, claudeCodeTurn());

    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(text(answer.body())).isEqualTo("Hello from the local model.");
    assertThat(answer.headers().firstValue("x-spillway-dropped-params"))
        .hasValue("thinking,context_management,output_config");
    JsonNode chat = ollamaChats(gw.h.ollama).get(0);
    assertThat(chat.path("tools").findValuesAsText("name")).contains("Bash", "Read", "Edit", "Write");
    assertThat(chat.path("messages").findValuesAsText("role")).contains("system", "user");
  }

  /** A turn the real Claude Code CLI sent (kept by {@link ClaudeCodeFailoverTest}). */
  private static String claudeCodeTurn() throws java.io.IOException {
    try (var in = MessagesApiTest.class.getResourceAsStream("/fixtures/claude-code/healthy-turn.json")) {
      assertThat(in).as("fixture").isNotNull();
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
  }

  @Test
  void countTokensIsAnsweredByTheGatewayAfterAuthentication() {
    HttpResponse<String> counted = gw.h.post("/v1/messages/count_tokens", null, """
        {"model":"%s","system":"You are terse.","tools":%s,
         "messages":[{"role":"user","content":"Count the tokens of this sentence, please."}]}"""
        .formatted(MODEL, TOOLS), "x-api-key", GatewayHarness.SILVER_KEY);

    assertThat(counted.statusCode()).as(counted.body()).isEqualTo(200);
    assertThat(parse(counted.body()).path("input_tokens").asInt()).isBetween(20, 200);
    assertThat(gw.anthropic.getAllServeEvents()).isEmpty();
    HttpResponse<String> wrongKey = gw.h.post("/v1/messages/count_tokens", "sk-wrong",
        "{\"model\":\"" + MODEL + "\",\"messages\":[]}");
    assertThat(wrongKey.statusCode()).isEqualTo(401);
    assertThat(parse(wrongKey.body()).path("error").path("type").asText()).isEqualTo("authentication_error");
  }

  private HttpResponse<String> messages(String key, String body) {
    return gw.messages(key, body, "anthropic-version", VERSION, "anthropic-beta", BETA);
  }

  private static String body(String prompt, boolean stream) {
    return """
        {"model":"%s","max_tokens":256,"stream":%s,"system":[{"type":"text","text":"You are Claude Code."}],
         "messages":[{"role":"user","content":[{"type":"text","text":"%s"}]}]}""".formatted(MODEL, stream, prompt);
  }

  private String routeState(String name) {
    JsonNode status = parse(gw.h.get("/admin/status", GatewayHarness.ADMIN_TOKEN).body());
    for (JsonNode route : status.path("routes")) {
      if (name.equals(route.path("name").asText())) {
        return route.path("breaker").path("state").asText();
      }
    }
    throw new AssertionError("no route " + name + " in " + status);
  }

  private static JsonNode eventData(String sse, String name) {
    for (String block : sse.split("\n\n")) {
      if (block.contains("event: " + name + "\n")) {
        return parse(block.lines().filter(l -> l.startsWith("data: ")).findFirst().orElseThrow().substring(6));
      }
    }
    throw new AssertionError("no " + name + " event in " + sse);
  }
}
