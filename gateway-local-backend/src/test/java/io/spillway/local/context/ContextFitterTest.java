package io.spillway.local.context;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.LocalContextConfig;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.trim.TrimSettings;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The rules by which a request is fitted to the local model's window. */
class ContextFitterTest {
  /** No margin, a 1024-token answer reserve, excerpts of 100 tokens: sizes in these tests are exact. */
  static final LocalContextConfig CONTEXT = new LocalContextConfig(8192, 32768, 2048, 1024, 100, 0.0);
  final ContextFitter fitter = new ContextFitter(CONTEXT, TrimSettings.DEFAULTS);

  static int tokens(JsonNode node) {
    return ContextFitter.tokens(node, TokenCounter.forModel(null));
  }

  static List<String> roles(ObjectNode body) {
    List<String> roles = new ArrayList<>();
    body.get("messages").forEach(m -> roles.add(m.path("role").asText()));
    return roles;
  }

  @Test
  void aRequestThatFitsIsPassedOnUntouched() {
    ObjectNode body = Conversations.chatAgent(2, "code", 20);

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    assertThat(fit.body()).isSameAs(body);
    assertThat(fit.cut()).isFalse();
    assertThat(fit.fits()).isTrue();
    assertThat(fit.numCtx()).isEqualTo(2048);
  }

  @Test
  void oldToolOutputsShrinkBeforeAnyTurnIsDropped() {
    ObjectNode body = Conversations.chatAgent(6, "code", 300);
    String lastOutput = body.get("messages").get(14).get("content").asText();
    assertThat(tokens(body.get("messages"))).isGreaterThan(8192);

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    assertThat(fit.cut()).isTrue();
    assertThat(fit.fits()).isTrue();
    ArrayNode messages = (ArrayNode) fit.body().get("messages");
    assertThat(messages).hasSize(body.get("messages").size());
    assertThat(messages.get(4).get("content").asText())
        .contains("... (context trimmed)")
        .hasSizeLessThan(body.get("messages").get(4).get("content").asText().length());
    assertThat(messages.get(14).get("content").asText()).as("the last turn's output").isEqualTo(lastOutput);
    assertThat(fit.summary()).contains("trimmed").doesNotContain("dropped");
    assertThat(body.get("messages").get(4).get("content").asText()).as("the client's body").doesNotContain("trimmed");
  }

  @Test
  void toolOutputsThatAreNotCodeAreCutToTheirFirstAndLastLines() {
    ObjectNode body = Conversations.chatAgent(4, "log", 400);

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    String first = fit.body().get("messages").get(4).get("content").asText();
    assertThat(first).startsWith("[turn0] step 0:").endsWith("step 399: compiled module number 399 without warnings in 12 ms")
        .contains("lines cut to fit the local model's context window");
    assertThat(tokens(fit.body().get("messages").get(4))).isLessThanOrEqualTo(CONTEXT.toolOutputTokens() + 4);
    assertThat(fit.body().get("messages")).hasSize(body.get("messages").size());
  }

  @Test
  void oldestTurnsAreDroppedOnlyWhenShorteningIsNotEnough() {
    ObjectNode body = Conversations.chatAgent(80, "log", 60);

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    assertThat(fit.fits()).isTrue();
    assertThat(fit.summary()).contains("cut", "dropped");
    ArrayNode messages = (ArrayNode) fit.body().get("messages");
    List<String> ids = new ArrayList<>();
    messages.forEach(m -> m.path("tool_calls").forEach(c -> ids.add(c.get("id").asText())));
    assertThat(ids).doesNotContain("call_0", "call_1").contains("call_79");
    assertThat(ids).as("what is kept is the newest, in order").isEqualTo(
        ids.stream().sorted((a, b) -> Integer.compare(Integer.parseInt(a.substring(5)), Integer.parseInt(b.substring(5))))
            .toList());
    assertThat(fit.promptTokens()).isLessThanOrEqualTo(8192 - 1024);
  }

  @Test
  void callAndItsOutputAreKeptOrDroppedTogether() {
    ObjectNode body = Conversations.chatAgent(150, "log", 80);
    // Two parallel calls in one assistant turn, answered by two tool messages.
    ArrayNode messages = (ArrayNode) body.get("messages");
    ObjectNode parallel = (ObjectNode) messages.get(3);
    parallel.withArray("tool_calls").addObject().put("id", "call_extra").put("type", "function")
        .putObject("function").put("name", "shell").put("arguments", "{}");
    messages.insert(5, Json.object().put("role", "tool").put("tool_call_id", "call_extra").put("content", "ok"));

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    assertThat(fit.summary()).contains("dropped");
    Set<String> calls = new HashSet<>();
    Set<String> outputs = new HashSet<>();
    for (JsonNode m : fit.body().get("messages")) {
      m.path("tool_calls").forEach(c -> calls.add(c.get("id").asText()));
      if (m.path("role").asText().equals("tool")) {
        outputs.add(m.get("tool_call_id").asText());
      }
    }
    assertThat(outputs).isEqualTo(calls).isNotEmpty().doesNotContain("call_extra");
  }

  @Test
  void responsesCallItemsAndTheirOutputsAreKeptOrDroppedTogether() {
    ObjectNode body = Json.object().put("model", "gpt-5-codex").put("instructions", Conversations.SYSTEM);
    ArrayNode input = body.putArray("input");
    input.addObject().put("type", "message").put("role", "user").putArray("content").addObject()
        .put("type", "input_text").put("text", "Task: make the build green.");
    for (int t = 0; t < 150; t++) {
      input.addObject().put("type", "reasoning").put("id", "rs_" + t).putArray("summary");
      if (t % 2 == 0) {
        input.addObject().put("type", "function_call").put("call_id", "fc_" + t).put("name", "shell")
            .put("arguments", "{\"command\":[\"make\"]}");
        input.addObject().put("type", "function_call_output").put("call_id", "fc_" + t)
            .put("output", Conversations.buildLog("t" + t, 60));
      } else {
        input.addObject().put("type", "custom_tool_call").put("call_id", "ct_" + t).put("name", "apply_patch")
            .put("input", "*** Begin Patch\n*** Update File: a.txt\n+line " + t + "\n*** End Patch");
        input.addObject().put("type", "custom_tool_call_output").put("call_id", "ct_" + t)
            .put("output", Conversations.buildLog("p" + t, 60));
      }
    }
    input.addObject().put("type", "message").put("role", "user").put("content", "Now run the tests.");
    body.putArray("tools").addObject().put("type", "custom").put("name", "apply_patch");

    ContextFitter.Fit fit = fitter.fit(Route.RESPONSES, body, 8192);

    assertThat(fit.fits()).isTrue();
    assertThat(fit.summary()).contains("dropped");
    Set<String> calls = new HashSet<>();
    Set<String> outputs = new HashSet<>();
    for (JsonNode item : fit.body().get("input")) {
      String type = item.path("type").asText();
      if (type.endsWith("_call")) {
        calls.add(item.get("call_id").asText());
      } else if (type.endsWith("_call_output")) {
        outputs.add(item.get("call_id").asText());
      }
    }
    assertThat(outputs).isEqualTo(calls).contains("fc_148", "ct_149").doesNotContain("fc_0");
    assertThat(fit.body().get("instructions").asText()).isEqualTo(Conversations.SYSTEM);
    assertThat(fit.body().get("tools")).isEqualTo(body.get("tools"));
  }

  @Test
  void latestUserTurnAndInstructionsAlwaysSurvive() {
    ObjectNode body = Conversations.chatAgent(200, "log", 40);

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    assertThat(fit.fits()).isTrue();
    ObjectNode fitted = fit.body();
    assertThat(roles(fitted)).startsWith("system", "developer");
    assertThat(fitted.get("messages").get(0).get("content").asText()).isEqualTo(Conversations.SYSTEM);
    JsonNode last = fitted.get("messages").get(fitted.get("messages").size() - 1);
    assertThat(last.get("role").asText()).isEqualTo("user");
    assertThat(last.get("content").asText()).isEqualTo("Now fix the failing test, please.");
    assertThat(fitted.get("tools")).isEqualTo(body.get("tools"));
    assertThat(roles(fitted)).as("the first task message is an old turn, so it may go").hasSizeLessThan(roles(body).size());
  }

  @Test
  void theLastTurnKeepsItsOutputWholeWhileOlderTurnsCanGo() {
    ObjectNode body = Conversations.chatAgent(30, "log", 100);
    // The agent's current work: the user asked, the model called, the output came back last.
    ArrayNode messages = (ArrayNode) body.get("messages");
    JsonNode user = messages.remove(messages.size() - 1);
    messages.insert(3, user);

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    JsonNode fittedLast = fit.body().get("messages").get(fit.body().get("messages").size() - 1);
    assertThat(fittedLast.get("tool_call_id").asText()).isEqualTo("call_29");
    assertThat(fittedLast.get("content").asText()).isEqualTo(messages.get(messages.size() - 1).get("content").asText());
  }

  @Test
  void aConversationThatCannotFitIsReportedAndNotCut() {
    ObjectNode body = Json.object().put("model", "gpt-4o");
    body.putArray("messages").addObject().put("role", "user").put("content", Conversations.prose("rivers", 12000));

    ContextFitter.Fit fit = fitter.fit(Route.CHAT_COMPLETIONS, body, 8192);

    assertThat(fit.fits()).isFalse();
    assertThat(fit.promptTokens()).isGreaterThan(8192 - 1024);
  }

  @Test
  void aCompletionsPromptKeepsItsEnd() {
    String prompt = Conversations.buildLog("p", 2000) + "\nThe next line is";
    ObjectNode body = Json.object().put("model", "gpt-3.5-turbo-instruct").put("prompt", prompt).put("max_tokens", 64);

    ContextFitter.Fit fit = fitter.fit(Route.COMPLETIONS, body, 4096);

    String fitted = fit.body().get("prompt").asText();
    assertThat(fit.cut()).isTrue();
    assertThat(fitted).endsWith("step 1999: compiled module number 1999 without warnings in 12 ms\nThe next line is");
    assertThat(TokenCounter.forModel(null).count(fitted)).isLessThanOrEqualTo(4096 - 64);
  }

  @Test
  void aResponsesInputStringHasOnlyItsCodeTrimmed() {
    String source = Conversations.javaSource("Big", 1500);
    ObjectNode body = Json.object().put("model", "gpt-4o").put("instructions", "Review this.")
        .put("input", "Review:\n```java\n" + source + "```\n");

    ContextFitter.Fit fit = fitter.fit(Route.RESPONSES, body, 8192);

    assertThat(fit.fits()).isTrue();
    assertThat(fit.body().get("input").asText()).startsWith("Review:\n```java\n").contains("... (context trimmed)");
    assertThat(fit.body().get("instructions").asText()).isEqualTo("Review this.");
  }

  @Test
  void numCtxFollowsWhatEachApiAsksForTheAnswer() {
    ObjectNode chat = Json.object().put("model", "m").put("max_completion_tokens", 3000);
    chat.putArray("messages").addObject().put("role", "user").put("content", Conversations.prose("sky", 1500));
    ObjectNode responses = Json.object().put("model", "m").put("max_output_tokens", 7000)
        .put("input", Conversations.prose("sky", 1500));
    ObjectNode completions = Json.object().put("model", "m").put("max_tokens", 100)
        .put("prompt", Conversations.prose("sky", 1500));

    assertThat(fitter.fit(Route.CHAT_COMPLETIONS, chat, 32768).numCtx()).isEqualTo(8192);
    assertThat(fitter.fit(Route.RESPONSES, responses, 32768).numCtx()).isEqualTo(16384);
    assertThat(fitter.fit(Route.COMPLETIONS, completions, 32768).numCtx()).isEqualTo(2048);
    assertThat(fitter.fit(Route.RESPONSES, responses, 8192).numCtx()).as("capped by the window").isEqualTo(8192);
  }
}
