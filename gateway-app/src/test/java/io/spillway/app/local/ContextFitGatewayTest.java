package io.spillway.app.local;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.observe.LogCapture;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import io.spillway.core.tokens.TokenCounter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A long agent conversation served locally is fitted to the local model's window, for every tier:
 * through the real gateway with the breaker open, against a fake Ollama that records the
 * {@code num_ctx} and the messages it got. The cloud path is left as it is.
 */
class ContextFitGatewayTest {
  /** The local model's window in these tests: 16384 tokens, so a 70K conversation must be cut. */
  static final String SMALL_WINDOW = """
      local:
        models:
          default: { model: "qwen2.5-coder:7b", contextTokens: 16384 }
      """;
  static final TokenCounter COUNTER = TokenCounter.forModel(null);

  static String key(String tier) {
    return switch (tier) {
      case "gold" -> GatewayHarness.GOLD_KEY;
      case "silver" -> GatewayHarness.SILVER_KEY;
      default -> GatewayHarness.BRONZE_KEY;
    };
  }

  static GatewayHarness startWithBreakerOpen(String yaml) {
    GatewayHarness h = startWithOllama(yaml);
    HttpResponse<String> forced = h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"state\":\"open\"}")).build());
    assertThat(forced.statusCode()).isEqualTo(200);
    return h;
  }

  static GatewayHarness startWithOllama(String yaml) {
    GatewayHarness h = GatewayHarness.start(yaml);
    h.ollama.stubFor(get("/api/version").willReturn(ollamaJson("{\"version\":\"0.12.6\"}")));
    h.ollama.stubFor(get("/api/tags").willReturn(ollamaJson(
        "{\"models\":[{\"name\":\"qwen2.5-coder:7b\",\"model\":\"qwen2.5-coder:7b\"},"
            + "{\"name\":\"llama3.2:3b\",\"model\":\"llama3.2:3b\"}]}")));
    h.ollama.stubFor(post("/api/chat").willReturn(ollamaJson("""
        {"model":"qwen2.5-coder:7b","created_at":"2026-11-10T10:00:00Z",
         "message":{"role":"assistant","content":"All tests pass except one."},
         "done":true,"done_reason":"stop","prompt_eval_count":12000,"eval_count":9}""")));
    h.ollama.stubFor(post("/api/generate").willReturn(ollamaJson("""
        {"model":"qwen2.5-coder:7b","created_at":"2026-11-10T10:00:00Z","response":" continued",
         "done":true,"done_reason":"stop","prompt_eval_count":3000,"eval_count":2}""")));
    return h;
  }

  /** One user message of prose, about 24 000 tokens: nothing in it may be cut, and 16384 cannot hold it. */
  static ObjectNode tooLongForTheWindow() {
    ObjectNode body = Json.object().put("model", "gpt-4o");
    body.putArray("messages").addObject().put("role", "user")
        .put("content", "Please read this paragraph about the release carefully. ".repeat(3000));
    return body;
  }

  static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder ollamaJson(String body) {
    return aResponse().withStatus(200).withHeader("Content-Type", "application/json").withBody(body);
  }

  /** The one request to {@code path} that carried a conversation (keep-warm loads carry an empty prompt). */
  static JsonNode onlyBody(WireMockServer server, String path) {
    List<JsonNode> bodies = server.findAll(postRequestedFor(urlEqualTo(path))).stream()
        .map(r -> parse(r.getBodyAsString()))
        .filter(b -> !b.path("prompt").asText("-").isEmpty())
        .toList();
    assertThat(bodies).hasSize(1);
    return bodies.get(0);
  }

  static JsonNode parse(String json) {
    try {
      return Json.parse(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static int textTokens(JsonNode node) {
    if (node.isTextual()) {
      return COUNTER.count(node.textValue());
    }
    int total = 0;
    for (JsonNode child : node) {
      total += textTokens(child);
    }
    return total;
  }

  /**
   * Ollama's messages carry no call ids: every tool message must follow its call (an assistant
   * message with tool calls, or another output of it), and calls and outputs must be as many.
   */
  static void assertCallsAndOutputsPaired(JsonNode messages) {
    int calls = 0;
    int outputs = 0;
    for (int i = 0; i < messages.size(); i++) {
      JsonNode m = messages.get(i);
      calls += m.path("tool_calls").size();
      if (m.path("role").asText().equals("tool")) {
        outputs++;
        JsonNode before = messages.get(i - 1);
        assertThat(before.path("tool_calls").size() > 0 || before.path("role").asText().equals("tool"))
            .as("message %d follows its call", i).isTrue();
      }
    }
    assertThat(outputs).isEqualTo(calls).isPositive();
  }

  @ParameterizedTest
  @ValueSource(strings = {"gold", "silver", "bronze"})
  void aSeventyThousandTokenAgentConversationIsFittedToTheLocalWindowForEveryTier(String tier) {
    ObjectNode conversation = AgentConversations.chat(67);
    assertThat(textTokens(conversation.get("messages"))).isGreaterThan(70_000);
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW)) {
      HttpResponse<String> answer = h.post("/v1/chat/completions", key(tier), Json.toString(conversation));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("local");
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).contains("context_fit");
      assertThat(parse(answer.body()).at("/choices/0/message/content").asText()).isEqualTo("All tests pass except one.");

      JsonNode sent = onlyBody(h.ollama, "/api/chat");
      assertThat(sent.at("/options/num_ctx").asInt()).isEqualTo(16384);
      JsonNode messages = sent.get("messages");
      assertThat(messages.get(0).get("role").asText()).isEqualTo("system");
      assertThat(messages.get(0).get("content").asText()).isEqualTo(AgentConversations.SYSTEM);
      JsonNode last = messages.get(messages.size() - 1);
      assertThat(last.get("role").asText()).isEqualTo("user");
      assertThat(last.get("content").asText()).isEqualTo(AgentConversations.LATEST);
      assertThat(sent.get("tools")).hasSize(1);
      assertThat(textTokens(messages) + textTokens(sent.get("tools")))
          .as("what the model gets leaves room for the answer in its 16384 tokens").isLessThan(16384 - 4096);
      assertThat(messages.size()).as("old turns were dropped").isLessThan(conversation.get("messages").size());
      assertCallsAndOutputsPaired(messages);
      String newest = AgentConversations.output(66);
      assertThat(messages.get(messages.size() - 2).get("content").asText())
          .as("the newest tool output keeps its first and last lines")
          .startsWith(newest.substring(0, newest.indexOf('\n')))
          .endsWith(newest.substring(newest.lastIndexOf('\n') + 1));
    }
  }

  @ParameterizedTest
  @ValueSource(booleans = {false, true})
  void theFittedStreamSaysContextFitToo(boolean stream) {
    ObjectNode conversation = AgentConversations.chat(67).put("stream", stream);
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW)) {
      h.ollama.stubFor(post("/api/chat").atPriority(1)
          .withRequestBody(matchingJsonPath("$.stream", equalTo("true")))
          .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/x-ndjson").withBody(
              "{\"model\":\"qwen2.5-coder:7b\",\"created_at\":\"2026-11-10T10:00:00Z\",\"message\":{\"role\":\"assistant\","
                  + "\"content\":\"Done\"},\"done\":false}\n"
                  + "{\"model\":\"qwen2.5-coder:7b\",\"created_at\":\"2026-11-10T10:00:00Z\",\"message\":{\"role\":"
                  + "\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":9000,"
                  + "\"eval_count\":1}\n")));

      HttpResponse<String> answer = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, Json.toString(conversation));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).contains("context_fit");
      assertThat(answer.body()).contains(stream ? "data: [DONE]" : "All tests pass except one.");
      assertThat(onlyBody(h.ollama, "/api/chat").at("/options/num_ctx").asInt()).isEqualTo(16384);
    }
  }

  @Test
  void aShortRequestIsNotCutAndGetsASmallNumCtx() {
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW)) {
      HttpResponse<String> answer = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          "{\"model\":\"gpt-4o\",\"max_tokens\":256,\"messages\":[{\"role\":\"user\",\"content\":\"Say hi\"}]}");

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-degraded")).isEmpty();
      assertThat(onlyBody(h.ollama, "/api/chat").at("/options/num_ctx").asInt()).isEqualTo(4096);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"gold", "silver", "bronze"})
  void aResponsesConversationKeepsItsInstructionsAndLatestMessageOnOllama(String tier) {
    ObjectNode conversation = AgentConversations.responsesMessages(40);
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW)) {
      HttpResponse<String> answer = h.post("/v1/responses", key(tier), Json.toString(conversation));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).contains("context_fit");
      JsonNode sent = onlyBody(h.ollama, "/api/chat");
      assertThat(sent.at("/options/num_ctx").asInt()).isEqualTo(16384);
      JsonNode messages = sent.get("messages");
      assertThat(messages.get(0).get("role").asText()).isEqualTo("system");
      assertThat(messages.get(0).get("content").asText()).isEqualTo(AgentConversations.SYSTEM);
      assertThat(messages.get(messages.size() - 1).get("content").asText()).isEqualTo(AgentConversations.LATEST);
      assertThat(messages.size()).isLessThan(conversation.get("input").size() + 1);
      assertThat(textTokens(messages)).isLessThan(16384 - 4096);
    }
  }

  @Test
  void aResponsesAgentConversationIsFittedForAnOpenAiKindServerWithoutNumCtx() {
    String yaml = SMALL_WINDOW + "  kind: openai\n  responsesApi: native\n";
    ObjectNode conversation = AgentConversations.responses(60);
    try (GatewayHarness h = startWithBreakerOpen(yaml)) {
      h.ollama.stubFor(post("/v1/responses").willReturn(OpenAiStubs.response("fitted")));

      HttpResponse<String> answer = h.post("/v1/responses", GatewayHarness.SILVER_KEY, Json.toString(conversation));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).contains("context_fit");
      List<LoggedRequest> requests = h.ollama.findAll(postRequestedFor(urlEqualTo("/v1/responses")));
      JsonNode sent = parse(requests.get(0).getBodyAsString());
      assertThat(sent.has("options")).isFalse();
      assertThat(sent.get("instructions").asText()).isEqualTo(AgentConversations.SYSTEM);
      JsonNode input = sent.get("input");
      assertThat(input.get(input.size() - 1).at("/content/0/text").asText()).isEqualTo(AgentConversations.LATEST);
      Set<String> calls = new HashSet<>();
      Set<String> outputs = new HashSet<>();
      for (JsonNode item : input) {
        String type = item.path("type").asText();
        if (type.endsWith("_call")) {
          calls.add(item.get("call_id").asText());
        } else if (type.endsWith("_call_output")) {
          outputs.add(item.get("call_id").asText());
        }
      }
      assertThat(outputs).isEqualTo(calls).contains("call_59").doesNotContain("call_0");
      assertThat(textTokens(input)).isLessThan(16384 - 4096);
    }
  }

  @Test
  void aResponsesAgentConversationIsFittedBeforeItBecomesChatForAnOpenAiKindServer() {
    String yaml = SMALL_WINDOW + "  kind: openai\n";
    ObjectNode conversation = AgentConversations.responses(60);
    try (GatewayHarness h = startWithBreakerOpen(yaml)) {
      h.ollama.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("fitted")));

      HttpResponse<String> answer = h.post("/v1/responses", GatewayHarness.SILVER_KEY, Json.toString(conversation));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).contains("context_fit");
      JsonNode sent = onlyBody(h.ollama, "/v1/chat/completions");
      assertThat(sent.has("options")).isFalse();
      JsonNode messages = sent.get("messages");
      assertThat(messages.get(0).get("role").asText()).isEqualTo("system");
      assertThat(messages.get(0).get("content").asText()).contains(AgentConversations.SYSTEM);
      assertThat(messages.get(messages.size() - 1).toString()).contains(AgentConversations.LATEST);
      Set<String> calls = new HashSet<>();
      Set<String> outputs = new HashSet<>();
      for (JsonNode message : messages) {
        message.path("tool_calls").forEach(call -> calls.add(call.get("id").asText()));
        if (message.path("role").asText().equals("tool")) {
          outputs.add(message.get("tool_call_id").asText());
        }
      }
      assertThat(outputs).isEqualTo(calls).contains("call_59").doesNotContain("call_0");
      assertThat(textTokens(messages)).isLessThan(16384 - 4096);
    }
  }

  @Test
  void aResponsesAgentConversationWithToolCallsIsFittedOnOllamaWithCallsNextToTheirOutputs() {
    ObjectNode conversation = AgentConversations.responses(60);
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW)) {
      HttpResponse<String> answer = h.post("/v1/responses", GatewayHarness.GOLD_KEY, Json.toString(conversation));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).contains("context_fit");
      JsonNode sent = onlyBody(h.ollama, "/api/chat");
      assertThat(sent.at("/options/num_ctx").asInt()).isEqualTo(16384);
      JsonNode messages = sent.get("messages");
      assertThat(messages.get(0).get("content").asText()).isEqualTo(AgentConversations.SYSTEM);
      assertThat(messages.get(messages.size() - 1).get("content").asText()).isEqualTo(AgentConversations.LATEST);
      assertCallsAndOutputsPaired(messages);
      assertThat(messages.size()).as("old turns were dropped").isLessThan(conversation.get("input").size());
      assertThat(textTokens(messages)).isLessThan(16384 - 4096);
    }
  }

  @Test
  void aRequestThatCannotFitIsRefusedWithoutRetryAfterWhileTrafficIsForcedLocal() {
    ObjectNode tooLong = tooLongForTheWindow();
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW)) {
      HttpResponse<String> answer = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, Json.toString(tooLong));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(400);
      assertThat(answer.headers().firstValue("retry-after")).isEmpty();
      JsonNode error = parse(answer.body()).get("error");
      assertThat(error.get("code").asText()).isEqualTo("unsupported_on_local");
      assertThat(error.get("param").asText()).isEqualTo("messages");
      assertThat(error.get("message").asText()).contains("qwen2.5-coder:7b").contains("context window");
      assertThat(h.ollama.findAll(postRequestedFor(urlEqualTo("/api/chat"))).stream()
          .filter(r -> !parse(r.getBodyAsString()).path("messages").isEmpty())).isEmpty();
    }
  }

  @Test
  void aRequestThatCannotFitGoesToTheCloudWhenTheBreakerOpenedOnItsOwn() {
    ObjectNode tooLong = tooLongForTheWindow();
    try (GatewayHarness h = startWithOllama(SMALL_WINDOW)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.atCapacity()));
      for (int i = 0; i < 3; i++) {
        h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, GatewayHarness.chatBody("gpt-4o", "hi", false));
      }
      HttpResponse<String> breaker = h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
          .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN).GET().build());
      assertThat(parse(breaker.body()).get("state").asText()).isEqualTo("open");
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("from the cloud")));

      HttpResponse<String> answer = h.post("/v1/chat/completions", GatewayHarness.SILVER_KEY, Json.toString(tooLong));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(answer.headers().firstValue("x-spillway-fallback")).hasValue("local_unsupported");
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).doesNotContain("context_fit");
      assertThat(parse(answer.body()).at("/choices/0/message/content").asText()).isEqualTo("from the cloud");
      List<LoggedRequest> toCloud = h.cloud.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
      assertThat(parse(toCloud.get(toCloud.size() - 1).getBodyAsString()).get("messages"))
          .as("the cloud gets the request as sent").isEqualTo(tooLong.get("messages"));
    }
  }

  @Test
  void aLongCompletionsPromptKeepsItsEnd() {
    StringBuilder prompt = new StringBuilder();
    for (int i = 0; i < 60; i++) {
      prompt.append(AgentConversations.output(i)).append('\n');
    }
    prompt.append("// The next function:");
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW)) {
      HttpResponse<String> answer = h.post("/v1/completions", GatewayHarness.GOLD_KEY,
          Json.toString(Json.object().put("model", "gpt-3.5-turbo-instruct").put("prompt", prompt.toString())
              .put("max_tokens", 1000)));

      assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).contains("context_fit");
      JsonNode sent = onlyBody(h.ollama, "/api/generate");
      assertThat(sent.get("prompt").asText()).endsWith("// The next function:");
      assertThat(COUNTER.count(sent.get("prompt").asText())).isLessThan(16384 - 1000);
      assertThat(sent.at("/options/num_ctx").asInt()).isEqualTo(16384);
    }
  }

  @Test
  void theCloudGetsTheConversationAsSentAndNoContextFit() {
    ObjectNode conversation = AgentConversations.chat(67);
    try (GatewayHarness h = GatewayHarness.start(SMALL_WINDOW)) {
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("from the cloud")));

      HttpResponse<String> answer = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, Json.toString(conversation));

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue("cloud");
      assertThat(answer.headers().firstValue("x-spillway-degraded").orElse("")).doesNotContain("context_fit");
      JsonNode sent = onlyBody(h.cloud, "/v1/chat/completions");
      assertThat(sent.get("messages")).isEqualTo(conversation.get("messages"));
      assertThat(sent.has("num_ctx")).isFalse();
    }
  }

  @Test
  void aFittedRequestIsCountedAndLoggedAsDegraded() {
    try (GatewayHarness h = startWithBreakerOpen(SMALL_WINDOW); LogCapture logs = new LogCapture()) {
      h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY, Json.toString(AgentConversations.chat(67)));

      assertThat(h.gateway().meters().get("spillway.degraded").tag("step", "context_fit").counter().count())
          .isEqualTo(1.0);
      await().atMost(Duration.ofSeconds(5)).until(() -> logs.accessLines().stream().anyMatch(l -> l.contains("\"chat\"")));
      JsonNode line = parse(logs.accessLines().stream().filter(l -> l.contains("\"chat\"")).findFirst().orElseThrow());
      assertThat(line.path("degraded").toString()).contains("context_fit");
      assertThat(line.path("backend").asText()).isEqualTo("local");
    }
  }

  @Test
  void theWindowIsLearnedFromOllamaWhenNotConfigured() {
    try (GatewayHarness h = startWithBreakerOpen("")) {
      h.ollama.stubFor(post("/api/show").willReturn(ollamaJson(
          "{\"model_info\":{\"general.architecture\":\"qwen2\",\"qwen2.context_length\":16384}}")));
      h.gateway().local().checkNow();

      HttpResponse<String> answer = h.post("/v1/chat/completions", GatewayHarness.GOLD_KEY,
          Json.toString(AgentConversations.chat(67)));

      assertThat(answer.statusCode()).isEqualTo(200);
      assertThat(h.gateway().local().server("local").contextWindows().source("qwen2.5-coder:7b")).isEqualTo("server");
      assertThat(onlyBody(h.ollama, "/api/chat").at("/options/num_ctx").asInt()).isEqualTo(16384);
    }
  }
}
