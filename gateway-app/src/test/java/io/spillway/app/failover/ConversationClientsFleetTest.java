package io.spillway.app.failover;

import static io.spillway.app.failover.FailoverFixtures.breaker;
import static io.spillway.app.failover.FailoverFixtures.setBreaker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.app.failover.ConversationClientsFailoverTest.Client;
import io.spillway.app.testing.FakeResponsesCloud;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.NodeChat;
import io.spillway.app.testing.RoundRobinFront;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The real client SDKs of {@link ConversationClientsFailoverTest} in front of a fleet: two gateways
 * sharing one real Redis ({@code store: redis://…}, so the breaker and the response store are the
 * fleet's) behind a round-robin load balancer ({@link RoundRobinFront}), so every turn lands on the
 * other replica than the turn before. Six turns: two on the healthy cloud, two while an operator
 * forces the breaker open on one replica (the other follows through Redis), two back on the cloud.
 * No turn fails, and each replica continues what the other stored, on local and on the cloud.
 */
class ConversationClientsFleetTest {
  static final List<String> BACKENDS = List.of("cloud", "cloud", "local", "local", "cloud", "cloud");
  /**
   * How long a change may take to reach every replica before the test fails. Generous: the awaits
   * return as soon as it arrives, so only what never arrives fails, not what a loaded machine delays.
   */
  static final Duration EVENTUALLY = Duration.ofSeconds(20);

  @TempDir Path dir;

  @ParameterizedTest(name = "{0}, {1} key, stream={2}")
  @MethodSource("io.spillway.app.failover.ConversationClientsFailoverTest#clients")
  @Timeout(180)
  void eachTurnOnTheOtherReplicaContinuesTheConversationOnTheCloudAndOnLocal(Client client, String tier,
      boolean stream) {
    String key = "sk-fleet-conversation-" + tier + "-team-key";
    try (RedisServer redis = RedisServer.start(dir.resolve("redis"));
        FakeResponsesCloud cloud = FakeResponsesCloud.start();
        GatewayHarness a = GatewayHarness.start(replicaConfig(redis, cloud, key, tier, null));
        GatewayHarness b = GatewayHarness.start(replicaConfig(redis, cloud, key, tier, a.ollama.baseUrl()));
        RoundRobinFront front = RoundRobinFront.start(List.of(a.url(""), b.url("")));
        NodeChat chat = NodeChat.start(client.script, Map.of("OPENAI_BASE_URL", front.baseUrl(),
            "OPENAI_API_KEY", key, "MODEL", ConversationClientsFailoverTest.MODEL, "STREAM", String.valueOf(stream)))) {
      ConversationClientsFailoverTest.ollamaAnswers(a.ollama, ConversationClientsFailoverTest.LOCAL_TEXT);
      List<JsonNode> turns = new ArrayList<>();

      play(chat, turns, 2);
      assertThat(setBreaker(a, "{\"state\":\"open\"}").statusCode()).isEqualTo(200);
      await("the override reaches the other replica").atMost(EVENTUALLY)
          .until(() -> breaker(b).get("state").asText().equals("open"));
      play(chat, turns, 2);
      assertThat(setBreaker(a, "{\"state\":\"auto\"}").statusCode()).isEqualTo(200);
      await("the other replica lets go of the override").atMost(EVENTUALLY)
          .until(() -> !breaker(b).get("state").asText().equals("open"));
      play(chat, turns, 1);
      await("the probe's success reaches the other replica").atMost(EVENTUALLY)
          .until(() -> breaker(b).get("state").asText().equals("closed"));
      play(chat, turns, 1);
      int exit = chat.finish(Duration.ofSeconds(20));

      String story = "turns:\n  " + turns.stream().map(JsonNode::toString).collect(Collectors.joining("\n  "))
          + "\ncloud:\n  " + cloud.exchanges().stream().map(e -> e.status() + " for " + e.request() + " -> " + e.response())
          .collect(Collectors.joining("\n  ")) + "\n" + chat.describe();
      assertThat(turns).as("every turn succeeded\n" + story).allSatisfy(t -> assertThat(t.get("ok").asBoolean()).isTrue());
      assertThat(exit).as(story).isZero();
      assertThat(front.served()).as("each turn on the other replica").containsExactly(0, 1, 0, 1, 0, 1);
      assertThat(turns.stream().map(t -> t.path("backend").asText()).toList()).as("who served each turn\n" + story)
          .isEqualTo(BACKENDS);
      assertThat(cloud.exchanges()).as("the cloud never had to refuse an id\n" + story)
          .allSatisfy(e -> assertThat(e.status()).isEqualTo(200));
      for (int t : List.of(1, 2, 5, 6)) {
        assertThat(turns.get(t - 1).get("text").asText()).as("turn %d, served by the cloud\n%s", t, story)
            .endsWith("I have read " + t + " user messages and " + (t - 1) + " assistant answers.");
      }
      List<JsonNode> localChats = AgentModelStubs.ollamaChats(a.ollama);
      assertThat(localChats).as("turns 3 and 4, once each, on local").hasSize(2);
      for (int i = 0; i < localChats.size(); i++) {
        int t = i + 3;
        assertThat(ConversationClientsFailoverTest.userTexts(localChats.get(i))).as("what local saw at turn %d", t)
            .isEqualTo(ConversationClientsFailoverTest.prompts(t));
        assertThat(ConversationClientsFailoverTest.roles(localChats.get(i))).as("what local saw at turn %d", t)
            .isEqualTo(ConversationClientsFailoverTest.alternating(t));
      }
    }
  }

  private static String replicaConfig(RedisServer redis, FakeResponsesCloud cloud, String key, String tier,
      String localBaseUrl) {
    return """
        failover: {fleetTimeout: 1s, fleetRefresh: 250ms, probeLease: 3m}
        quota: {storeTimeout: 1s, flushInterval: 250ms}
        server: {drainTimeout: 500ms}
        store: %s
        cloud: {baseUrl: %s}
        keys:
          - { key: %s, team: fleet-conversation-%s, tier: %s }
        """.formatted(redis.uri(), cloud.baseUrl(), key, tier, tier)
        + (localBaseUrl == null ? "" : "local: {baseUrl: %s}\n".formatted(localBaseUrl));
  }

  private static void play(NodeChat chat, List<JsonNode> turns, int count) {
    for (int i = 0; i < count; i++) {
      turns.add(chat.say(ConversationClientsFailoverTest.prompt(turns.size() + 1),
          ConversationClientsFailoverTest.TURN_TIMEOUT));
    }
  }
}
