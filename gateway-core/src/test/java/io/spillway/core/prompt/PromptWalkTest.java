package io.spillway.core.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.core.tokens.TokenCounter;
import java.io.IOException;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class PromptWalkTest {
  private static final String CHAT = """
      {"model":"gpt-4o","messages":[
        {"role":"system","content":"You fix bugs."},
        {"role":"user","name":"ana","content":[{"type":"text","text":"Why does this fail?"},
          {"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},
        {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
          "function":{"name":"run","arguments":"{\\"cmd\\":\\"make test\\"}"}}]}],
       "tools":[{"type":"function","function":{"name":"run","parameters":{"type":"object"}}}]}
      """;

  @Test
  void aRequestIsWalkedOnceAndEveryCopyOfItSharesTheWalk() {
    GatewayRequest request = request(Route.CHAT_COMPLETIONS, CHAT);
    PromptWalk walk = PromptWalk.of(request);

    assertThat(PromptWalk.of(request)).isSameAs(walk);
    assertThat(PromptWalk.of(request.withHeaders(Headers.of("x-a", "b")))).isSameAs(walk);
    assertThat(PromptWalk.of(request, request.body())).isSameAs(walk);
  }

  @Test
  void aChangedCopyIsWalkedForItsOwnTextsAndTheClientsWalkStays() {
    GatewayRequest request = request(Route.CHAT_COMPLETIONS, CHAT);
    PromptWalk client = PromptWalk.of(request);
    ObjectNode changed = request.body().deepCopy();
    ((ObjectNode) changed.get("messages").get(0)).put("content", "You fix bugs, briefly.");
    GatewayRequest copy = request.withBody(changed);

    PromptWalk own = PromptWalk.of(copy);

    assertThat(own).isNotSameAs(client);
    assertThat(own.texts()).containsExactly("You fix bugs, briefly.", "Why does this fail?");
    assertThat(PromptWalk.of(copy)).isSameAs(own);
    assertThat(PromptWalk.of(copy, request.body())).isSameAs(client);
    assertThat(client.texts()).containsExactly("You fix bugs.", "Why does this fail?");
  }

  @Test
  void theSameBodyAsAnotherRouteIsWalkedByThatRoutesRules() {
    GatewayRequest request = request(Route.MESSAGES, """
        {"model":"claude-sonnet-4-5","system":"Be brief.","messages":[{"role":"user","content":"Count me."}]}
        """);
    assertThat(PromptWalk.of(request).texts()).containsExactly("Be brief.", "Count me.");

    GatewayRequest count = request.asRoute(Route.MESSAGES_COUNT_TOKENS, request.body());
    assertThat(PromptWalk.of(count).route()).isEqualTo(Route.MESSAGES_COUNT_TOKENS);
    assertThat(PromptWalk.of(count).texts()).isEmpty();
  }

  @Test
  void chatTextsAreTheContentsAndTheEstimateCountsNamesArgumentsAndToolsToo() {
    ObjectNode body = body(CHAT);
    PromptWalk walk = PromptWalk.walk(Route.CHAT_COMPLETIONS, body);
    TokenCounter counter = TokenCounter.forModel("gpt-4o");

    assertThat(walk.texts()).containsExactly("You fix bugs.", "Why does this fail?");
    long expected = OpenAiPrompt.REPLY_PRIMER + 3 * OpenAiPrompt.PER_MESSAGE
        + counter.count("You fix bugs.") + counter.count("ana") + counter.count("Why does this fail?")
        + counter.count("run") + counter.count("{\"cmd\":\"make test\"}")
        + counter.count(Json.toString(body.get("tools")));
    assertThat(walk.promptTokens(counter.tally(Long.MAX_VALUE))).isEqualTo(expected);
  }

  @Test
  void aMessagesToolResultIsReadAfterItsMessagesOwnTextAndAToolUseIsCountedAsJson() {
    PromptWalk walk = PromptWalk.walk(Route.MESSAGES, body("""
        {"model":"claude-sonnet-4-5","system":[{"type":"text","text":"You are Claude Code."}],"messages":[
          {"role":"user","content":[
            {"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"exit 1"}]},
            {"type":"text","text":"It failed."}]},
          {"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"ls"}}]}]}
        """));
    TokenCounter counter = TokenCounter.forModel("claude-sonnet-4-5");

    assertThat(walk.texts()).containsExactly("You are Claude Code.", "It failed.", "exit 1");
    long expected = 2 * MessagesPrompt.PER_MESSAGE + counter.count("You are Claude Code.") + counter.count("exit 1")
        + counter.count("It failed.") + counter.count(Json.toString(Json.object().put("command", "ls")))
        + counter.count("Bash");
    assertThat(walk.promptTokens(counter.tally(Long.MAX_VALUE))).isEqualTo(expected);
  }

  @Test
  void embeddingsAreCountedAndNeverRead() {
    PromptWalk walk = PromptWalk.walk(Route.EMBEDDINGS, body("""
        {"model":"text-embedding-3-small","input":["first text",[101,102,103]]}
        """));
    TokenCounter counter = TokenCounter.forModel("text-embedding-3-small");

    assertThat(walk.texts()).isEmpty();
    assertThat(walk.promptTokens(counter.tally(Long.MAX_VALUE))).isEqualTo(counter.count("first text") + 3);
  }

  private static GatewayRequest request(Route route, String json) {
    return GatewayRequest.create("req-1", route, Headers.EMPTY, body(json), null, Instant.EPOCH);
  }

  private static ObjectNode body(String json) {
    try {
      return (ObjectNode) Json.parse(json.getBytes());
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
