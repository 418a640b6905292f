package io.spillway.app.conversations;

import static io.spillway.app.conversations.Turns.items;
import static io.spillway.app.conversations.Turns.reference;
import static io.spillway.app.conversations.Turns.request;
import static io.spillway.app.conversations.Turns.send;
import static io.spillway.app.conversations.Turns.user;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.openai.errors.NotFoundException;
import io.spillway.app.conversations.Turns.Turn;
import io.spillway.app.testing.FakeLocalModel;
import io.spillway.app.testing.FakeResponsesCloud;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Two replicas sharing one real redis-server: a conversation's next turn continues on whichever
 * replica it lands, across the failover in both directions, and its stored responses read the same
 * from either, for the team that stored them only.
 */
class FleetConversationTest {
  @TempDir static Path dir;
  private static RedisServer redis;

  @BeforeAll
  static void startRedis() {
    redis = RedisServer.start(dir.resolve("redis"));
  }

  @AfterAll
  static void stopRedis() {
    if (redis != null) {
      redis.close();
    }
  }

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
      for (boolean stream : List.of(false, true)) {
        cases.add(Arguments.of(key.replace("-team-key", "").replace("sk-", ""), key, stream));
      }
    }
    return cases.stream();
  }

  private static GatewayHarness replica(FakeResponsesCloud cloud, FakeLocalModel local) {
    return GatewayHarness.start("""
        cloud:
          baseUrl: %s
        quota: {storeTimeout: 2s}
        store: %s
        %s""".formatted(cloud.baseUrl(), redis.uri(), local.localYaml("ollama")));
  }

  @ParameterizedTest(name = "{0} stream={2}")
  @MethodSource("cases")
  void turnTwoLandsOnTheOtherReplicaAndTheConversationGoesOn(String tier, String key, boolean stream) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness a = replica(cloud, local);
        GatewayHarness b = replica(cloud, local)) {
      Turn one = send(a, key, request(stream).set("input", items(user("one"))));
      assertThat(one.status()).as(one.raw().body()).isEqualTo(200);
      assertThat(one.backend()).isEqualTo("cloud");

      cloud.atCapacity(true);
      Turn two = send(b, key, request(stream).put("input", "two").put("previous_response_id", one.id()));
      assertThat(two.status()).as(two.raw().body()).isEqualTo(200);
      assertThat(two.backend()).isEqualTo("local");
      assertThat(two.text()).isEqualTo("local heard: one|two");

      cloud.atCapacity(false);
      Turns.breaker(a, "closed");
      Turn three = send(a, key, request(stream).put("input", "three").put("previous_response_id", two.id()));
      assertThat(three.status()).as(three.raw().body()).isEqualTo(200);
      assertThat(three.backend()).isEqualTo("cloud");
      assertThat(three.text()).startsWith("cloud heard: one|two|three;");

      Turn four = send(b, key, request(stream).set("input",
          items(user("one"), reference(one.messageId()), reference(two.messageId()), user("four"))));
      assertThat(four.status()).as(four.raw().body()).isEqualTo(200);
      assertThat(four.text()).as("a reference minted on the other replica resolves here")
          .startsWith("cloud heard: one|four;");

      assertThat(b.openAi(key).responses().retrieve(two.id()).id()).isEqualTo(two.id());
      assertThat(a.openAi(key).responses().retrieve(two.id()).id()).isEqualTo(two.id());
      String other = key.equals(GatewayHarness.SILVER_KEY) ? GatewayHarness.BRONZE_KEY : GatewayHarness.SILVER_KEY;
      assertThatThrownBy(() -> a.openAi(other).responses().retrieve(two.id())).isInstanceOf(NotFoundException.class);
      Turns.breaker(a, "auto");
    }
  }
}
