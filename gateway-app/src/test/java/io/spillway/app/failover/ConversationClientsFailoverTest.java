package io.spillway.app.failover;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.failover.AgentModelStubs.ollamaAgent;
import static io.spillway.app.failover.AgentModelStubs.ollamaChats;
import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.setBreaker;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import io.spillway.app.deploy.RepositoryFiles;
import io.spillway.app.testing.FakeResponsesCloud;
import io.spillway.app.testing.FakeResponsesCloud.Exchange;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.NodeChat;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Conversations that rely on the Responses API's stored state, played by the real client SDKs with
 * their defaults (the scripts of {@code gateway-app/src/test/node}, see {@link NodeChat}) through the
 * real gateway, in front of a cloud that keeps stored state as OpenAI does ({@link
 * FakeResponsesCloud}: it resolves only the ids it issued and answers 400 for any other) and a
 * stand-in Ollama:
 *
 * <ul>
 *   <li>the Vercel AI SDK ({@code ai} with {@code @ai-sdk/openai}, {@code openai.responses(model)}):
 *       {@code store} on, and from turn 2 every earlier assistant answer sent as an {@code
 *       item_reference};
 *   <li>the OpenAI Agents SDK: {@code run(agent, input, { previousResponseId })}.
 * </ul>
 *
 * <p>Ten turns of one conversation: two on a healthy cloud, four in a capacity storm (three that the
 * cloud answers "at capacity" and local serves, which opens the breaker, and one sent straight to
 * local), two while the operator forces the breaker open (the cloud has recovered), and two after
 * the override is lifted and {@code failover.localFor} has passed on the gateway's clock. Not one
 * turn may fail, each is served by the backend the breaker names, and every answer was given with the
 * whole conversation in view: each local request carries every earlier message, and the cloud says
 * how many it read.
 *
 * <p>Needs Node 22 and the SDKs installed (see {@link NodeChat}); skipped with the reason otherwise,
 * except in CI.
 */
class ConversationClientsFailoverTest {
  static final String MODEL = "gpt-4.1";
  static final String LOCAL_TEXT = "Local answer, with the whole conversation in view.";
  static final Duration TURN_TIMEOUT = Duration.ofSeconds(30);
  static final List<String> BACKENDS =
      List.of("cloud", "cloud", "local", "local", "local", "local", "local", "local", "cloud", "cloud");
  static final Path FIXTURES = Path.of("gateway-local-backend/src/test/resources/fixtures");

  /** A client SDK: its script, and where its captured requests are kept. */
  enum Client {
    VERCEL_AI_SDK("vercel-ai-chat.mjs", "ai-sdk"),
    OPENAI_AGENTS_SDK("agents-chat.mjs", "openai-agents");

    final String script;
    final String fixtures;

    Client(String script, String fixtures) {
      this.script = script;
      this.fixtures = fixtures;
    }
  }

  /** Both SDKs, silver and bronze keys, buffered and streamed. */
  static Stream<Arguments> clients() {
    List<Arguments> cases = new ArrayList<>();
    for (Client client : Client.values()) {
      for (String tier : List.of("silver", "bronze")) {
        for (boolean stream : List.of(false, true)) {
          cases.add(Arguments.of(client, tier, stream));
        }
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0}, {1} key, stream={2}")
  @MethodSource("clients")
  @Timeout(180)
  void aDefaultConversationRunsThroughHealthyStormOverrideAndHealthyAgainWithoutAFailedTurn(
      Client client, String tier, boolean stream) throws IOException {
    String key = "sk-conversation-" + tier + "-team-key";
    try (FakeResponsesCloud cloud = FakeResponsesCloud.start();
        GatewayHarness h = GatewayHarness.start("""
            cloud:
              baseUrl: %s
            keys:
              - { key: %s, team: conversation-%s, tier: %s }
            """.formatted(cloud.baseUrl(), key, tier, tier));
        NodeChat chat = NodeChat.start(client.script, Map.of("OPENAI_BASE_URL", h.baseUrl(), "OPENAI_API_KEY", key,
            "MODEL", MODEL, "STREAM", String.valueOf(stream)))) {
      ollamaAnswers(h.ollama, LOCAL_TEXT);
      List<JsonNode> turns = new ArrayList<>();

      // Healthy: the cloud serves, and the ids it issued travel back to it untouched.
      play(chat, turns, 2);
      // A capacity storm: three capacity answers (each turn retried on local) open the breaker.
      cloud.atCapacity(true);
      play(chat, turns, 3);
      String stormState = breaker(h).get("state").asText();
      play(chat, turns, 1);
      // The cloud has recovered, but the operator keeps traffic local.
      cloud.atCapacity(false);
      assertThat(setBreaker(h, "{\"state\":\"open\"}").statusCode()).isEqualTo(200);
      play(chat, turns, 2);
      // Healthy again: the override lifted, localFor passed; the cloud gets what local added.
      assertThat(setBreaker(h, "{\"state\":\"auto\"}").statusCode()).isEqualTo(200);
      h.clock.advance(h.gateway().config().failover().localFor().plusSeconds(1));
      play(chat, turns, 2);
      int exit = chat.finish(Duration.ofSeconds(20));

      String story = story(turns, cloud, chat);
      List<Exchange> exchanges = cloud.exchanges();
      // What the SDK sends on a healthy cloud is kept as a fixture (a new capture lands in target/).
      JsonNode secondTurn = exchanges.get(1).request();
      Path capture = Path.of("target/captured", client.fixtures, fixture(client, stream).getFileName().toString());
      Files.createDirectories(capture.getParent());
      Files.writeString(capture, Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(secondTurn) + "\n");
      assertThat(secondTurn).as("turn 2 reached the cloud exactly as %s sent it (captured in %s)", client,
          fixture(client, stream)).isEqualTo(Json.parse(Files.readString(fixture(client, stream))));
      assertThat(turns).as("every turn succeeded\n" + story).allSatisfy(t -> assertThat(t.get("ok").asBoolean()).isTrue());
      assertThat(exit).as("the script exits 0 when no turn failed\n" + story).isZero();
      assertThat(turns.stream().map(t -> t.path("backend").asText()).toList()).as("who served each turn\n" + story)
          .isEqualTo(BACKENDS);
      assertThat(stormState).as("three capacity answers in a row opened the breaker").isEqualTo("open");
      assertThat(breaker(h).get("state").asText()).as("the probe closed the breaker").isEqualTo("closed");

      assertThat(exchanges).as("the cloud never had to refuse an id it did not issue\n" + story)
          .allSatisfy(e -> assertThat(e.status()).isIn(200, 503));
      assertThat(exchanges).as("turns 1-2, three storm turns, turns 9-10: the breaker and the override kept"
          + " turns 6-8 off the cloud\n" + story).hasSize(7);
      assertThat(exchanges).as("the company's key, never the client's, reached the cloud")
          .allSatisfy(e -> assertThat(e.authorization()).isEqualTo("Bearer " + GatewayHarness.CLOUD_KEY));
      for (int t = 1; t <= BACKENDS.size(); t++) {
        if (BACKENDS.get(t - 1).equals("cloud")) {
          assertThat(turns.get(t - 1).get("text").asText()).as("turn %d, served by the cloud\n%s", t, story)
              .endsWith("I have read " + t + " user messages and " + (t - 1) + " assistant answers.");
        } else {
          assertThat(turns.get(t - 1).get("text").asText()).as("turn %d", t).isEqualTo(LOCAL_TEXT);
        }
      }
      List<JsonNode> localChats = ollamaChats(h.ollama);
      assertThat(localChats).as("turns 3 to 8, once each, on local").hasSize(6);
      for (int i = 0; i < localChats.size(); i++) {
        int t = i + 3;
        assertThat(userTexts(localChats.get(i))).as("the user's messages local saw at turn %d", t)
            .isEqualTo(prompts(t));
        assertThat(roles(localChats.get(i))).as("the conversation local saw at turn %d", t)
            .isEqualTo(alternating(t));
      }
      JsonNode lastTurn = exchanges.get(exchanges.size() - 1).request();
      assertThat(storedStateIds(lastTurn)).as("back on the cloud, the ids it issued still reach it as ids\n" + story)
          .isNotEmpty().allMatch(cloud::issued);
    }
  }

  /** The ids of stored state a Responses request refers to: its previous_response_id and item_references. */
  private static List<String> storedStateIds(JsonNode request) {
    List<String> ids = new ArrayList<>();
    if (request.hasNonNull("previous_response_id")) {
      ids.add(request.get("previous_response_id").asText());
    }
    request.path("input").forEach(item -> {
      if (item.path("type").asText().equals("item_reference")) {
        ids.add(item.path("id").asText());
      }
    });
    return ids;
  }

  @Test
  void theCapturedSecondTurnsUseTheStoredStateTheyAreKeptFor() throws IOException {
    for (boolean stream : List.of(false, true)) {
      JsonNode vercel = Json.parse(Files.readString(fixture(Client.VERCEL_AI_SDK, stream)));
      assertThat(vercel.path("previous_response_id").isMissingNode()).isTrue();
      assertThat(vercel.get("input").findValuesAsText("type")).as("the AI SDK refers to its first answer")
          .contains("item_reference");
      JsonNode agents = Json.parse(Files.readString(fixture(Client.OPENAI_AGENTS_SDK, stream)));
      assertThat(agents.get("previous_response_id").asText()).isEqualTo("resp_cloud_1");
      assertThat(agents.get("input").toString()).doesNotContain("msg_cloud_1");
    }
  }

  @Test
  void ciInstallsTheNodeAndSdkVersionsTheDocsWereCheckedWith() throws IOException {
    Path root = RepositoryFiles.root();
    JsonNode lock = Json.parse(Files.readString(NodeChat.folder().resolve("package-lock.json")));
    String docs = Files.readString(root.resolve("docs/clients.md"));
    assertThat(lock.at("/packages/node_modules~1node-linux-x64/version").asText()).isEqualTo(NodeChat.NODE_VERSION);
    assertThat(docs).contains("Node " + NodeChat.NODE_VERSION);
    for (String sdk : List.of("ai", "@ai-sdk/openai", "@openai/agents")) {
      String version = lock.at("/packages/node_modules~1" + sdk.replace("/", "~1") + "/version").asText();
      assertThat(docs).as("docs/clients.md names the version of %s it was checked with", sdk)
          .contains("`" + sdk + "` " + version);
    }
    assertThat(Files.readString(root.resolve(".ci/run"))).contains("gateway-app/src/test/node").contains("npm ci");
  }

  /**
   * Makes {@code ollama} a model that answers {@code text} to every chat: a streamed request
   * ({@code stream} true, Ollama's default) with NDJSON lines, a buffered one with one JSON object,
   * as Ollama's {@code /api/chat} does.
   */
  static void ollamaAnswers(WireMockServer ollama, String text) {
    ollamaAgent(ollama, "unused", "unused", text, text);
    ObjectNode answer = Json.object().put("model", AgentModelStubs.OLLAMA_MODEL)
        .put("created_at", "2026-11-10T10:00:00.000000Z").put("done", true).put("done_reason", "stop")
        .put("prompt_eval_count", 180).put("eval_count", 11);
    answer.putObject("message").put("role", "assistant").put("content", text);
    ollama.stubFor(post("/api/chat").atPriority(1).withRequestBody(matchingJsonPath("$.stream", equalTo("false")))
        .willReturn(OpenAiStubs.json(200, Json.toString(answer))));
  }

  private static void play(NodeChat chat, List<JsonNode> turns, int count) {
    for (int i = 0; i < count; i++) {
      turns.add(chat.say(prompt(turns.size() + 1), TURN_TIMEOUT));
    }
  }

  /** What the user types at turn {@code t}. */
  static String prompt(int t) {
    return "Turn " + t + ": tell me one more thing about rivers.";
  }

  /** The user's messages up to turn {@code t}, in order. */
  static List<String> prompts(int t) {
    List<String> prompts = new ArrayList<>();
    for (int i = 1; i <= t; i++) {
      prompts.add(prompt(i));
    }
    return prompts;
  }

  /** The texts of the user messages of an Ollama {@code /api/chat} body, in order. */
  static List<String> userTexts(JsonNode chat) {
    List<String> texts = new ArrayList<>();
    chat.path("messages").forEach(m -> {
      if (m.path("role").asText().equals("user")) {
        texts.add(m.path("content").asText());
      }
    });
    return texts;
  }

  /** user, assistant, user, … ending with the user's turn {@code t}. */
  static List<String> alternating(int t) {
    List<String> roles = new ArrayList<>();
    for (int i = 1; i <= t; i++) {
      roles.add("user");
      if (i < t) {
        roles.add("assistant");
      }
    }
    return roles;
  }

  /** The user and assistant roles of an Ollama {@code /api/chat} body, in order (system left out). */
  static List<String> roles(JsonNode chat) {
    List<String> roles = new ArrayList<>();
    chat.path("messages").forEach(m -> {
      String role = m.path("role").asText();
      if (role.equals("user") || role.equals("assistant")) {
        roles.add(role);
      }
    });
    return roles;
  }

  private static Path fixture(Client client, boolean stream) {
    return RepositoryFiles.root().resolve(FIXTURES)
        .resolve(client.fixtures + "/second-turn" + (stream ? "-stream" : "") + ".json");
  }

  /** Every turn and every cloud exchange, for the message of a failed assertion. */
  private static String story(List<JsonNode> turns, FakeResponsesCloud cloud, NodeChat chat) {
    String turnLines = turns.stream().map(JsonNode::toString).collect(Collectors.joining("\n  "));
    String cloudLines = cloud.exchanges().stream()
        .map(e -> e.status() + " for " + e.request() + (e.status() == 200 ? "" : "\n      -> " + e.response()))
        .collect(Collectors.joining("\n  "));
    return "turns:\n  " + turnLines + "\ncloud:\n  " + cloudLines + "\n" + chat.describe();
  }
}
