package io.spillway.app.conversations;

import static io.spillway.app.conversations.Turns.items;
import static io.spillway.app.conversations.Turns.reference;
import static io.spillway.app.conversations.Turns.request;
import static io.spillway.app.conversations.Turns.send;
import static io.spillway.app.conversations.Turns.user;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.spillway.app.conversations.Turns.Turn;
import io.spillway.app.testing.FakeLocalModel;
import io.spillway.app.testing.FakeResponsesCloud;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.json.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A conversation that relies on the Responses API's stored state survives the failover: healthy on
 * the cloud, through a storm on local, under a forced override, and back on the cloud, for every
 * tier, buffered and streamed, with both local kinds. The cloud is a fake that, like OpenAI, knows
 * only the ids it issued and answers 400 for any other, so an id minted on local that reached it
 * unexpanded would fail the turn.
 */
class ConversationFailoverTest {
  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
      for (boolean stream : List.of(false, true)) {
        for (String kind : List.of("ollama", "openai")) {
          cases.add(Arguments.of(key.replace("-team-key", "").replace("sk-", ""), key, stream, kind));
        }
      }
    }
    return cases.stream();
  }

  private static GatewayHarness gateway(FakeResponsesCloud cloud, FakeLocalModel local, String kind) {
    return GatewayHarness.start("""
        cloud:
          baseUrl: %s
        %s""".formatted(cloud.baseUrl(), local.localYaml(kind)));
  }

  @ParameterizedTest(name = "{0} stream={2} local={3}")
  @MethodSource("cases")
  void previousResponseIdConversationRunsHealthyThroughStormAndOverrideBackToTheCloud(
      String tier, String key, boolean stream, String kind) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local, kind)) {
      Turn one = send(h, key, request(stream).put("input", "one"));
      assertThat(one.status()).as(one.raw().body()).isEqualTo(200);
      assertThat(one.backend()).isEqualTo("cloud");

      cloud.atCapacity(true);
      Turn two = send(h, key, request(stream).put("input", "two").put("previous_response_id", one.id()));
      assertThat(two.status()).as(two.raw().body()).isEqualTo(200);
      assertThat(two.backend()).isEqualTo("local");
      assertThat(two.text()).isEqualTo("local heard: one|two");
      assertThat(two.body().get("store").asBoolean()).as("stored, and says so").isTrue();
      assertThat(two.body().get("previous_response_id").asText()).isEqualTo(one.id());

      assertThat(Turns.breaker(h, "open").statusCode()).isEqualTo(200);
      cloud.atCapacity(false);
      Turn three = send(h, key, request(stream).put("input", "three").put("previous_response_id", two.id()));
      assertThat(three.status()).as(three.raw().body()).isEqualTo(200);
      assertThat(three.backend()).isEqualTo("local");
      assertThat(three.text()).isEqualTo("local heard: one|two|three");

      assertThat(Turns.breaker(h, "closed").statusCode()).isEqualTo(200);
      int before = cloud.received().size();
      Turn four = send(h, key, request(stream).put("input", "four").put("previous_response_id", three.id()));
      assertThat(four.status()).as(four.raw().body()).isEqualTo(200);
      assertThat(four.backend()).isEqualTo("cloud");
      assertThat(four.text()).startsWith("cloud heard: one|two|three|four;");
      JsonNode sentUp = cloud.received().get(before);
      assertThat(sentUp.has("previous_response_id")).as("a local id is expanded, never sent up").isFalse();

      Turn five = send(h, key, request(stream).put("input", "five").put("previous_response_id", four.id()));
      assertThat(five.status()).as(five.raw().body()).isEqualTo(200);
      assertThat(five.text()).startsWith("cloud heard: one|two|three|four|five;");
      JsonNode healthy = cloud.received().get(cloud.received().size() - 1);
      assertThat(healthy.get("previous_response_id").asText()).as("the cloud's own id passes untouched")
          .isEqualTo(four.id());
      assertThat(healthy.get("input").asText()).isEqualTo("five");
    }
  }

  @ParameterizedTest(name = "{0} stream={2} local={3}")
  @MethodSource("cases")
  void itemReferenceConversationRunsHealthyThroughStormAndOverrideBackToTheCloud(
      String tier, String key, boolean stream, String kind) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local, kind)) {
      ArrayNode history = items(user("one"));
      Turn one = send(h, key, request(stream).set("input", history.deepCopy()));
      assertThat(one.status()).as(one.raw().body()).isEqualTo(200);
      history.add(reference(one.messageId())).add(user("two"));

      cloud.atCapacity(true);
      Turn two = send(h, key, request(stream).set("input", history.deepCopy()));
      assertThat(two.status()).as(two.raw().body()).isEqualTo(200);
      assertThat(two.backend()).isEqualTo("local");
      assertThat(two.text()).isEqualTo("local heard: one|two");
      JsonNode chat = local.chats.get(local.chats.size() - 1);
      assertThat(Json.toString(chat)).as("the cloud's answer, resolved from the store")
          .contains("cloud heard: one");
      history.add(reference(two.messageId())).add(user("three"));

      assertThat(Turns.breaker(h, "open").statusCode()).isEqualTo(200);
      Turn three = send(h, key, request(stream).set("input", history.deepCopy()));
      assertThat(three.status()).as(three.raw().body()).isEqualTo(200);
      assertThat(three.backend()).isEqualTo("local");
      assertThat(three.text()).isEqualTo("local heard: one|two|three");
      history.add(reference(three.messageId())).add(user("four"));

      cloud.atCapacity(false);
      assertThat(Turns.breaker(h, "closed").statusCode()).isEqualTo(200);
      Turn four = send(h, key, request(stream).set("input", history.deepCopy()));
      assertThat(four.status()).as(four.raw().body()).isEqualTo(200);
      assertThat(four.backend()).isEqualTo("cloud");
      assertThat(four.text()).startsWith("cloud heard: one|two|three|four;");
      JsonNode sentUp = cloud.received().get(cloud.received().size() - 1).get("input");
      assertThat(Json.toString(sentUp)).as("the cloud's own reference passes untouched")
          .contains("\"item_reference\"").contains(one.messageId())
          .doesNotContain(two.messageId()).doesNotContain(three.messageId())
          .contains("local heard: one|two|three");
    }
  }

  @ParameterizedTest(name = "{0} stream={2} local={3}")
  @MethodSource("cases")
  void aConversationBegunOnTheCloudContinuesOnLocalWhenTheBreakerIsAlreadyOpen(
      String tier, String key, boolean stream, String kind) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local, kind)) {
      Turn one = send(h, key, request(stream).put("input", "one"));
      cloud.atCapacity(true);
      for (int i = 0; i < 3; i++) {
        send(h, GatewayHarness.GOLD_KEY, request(false).put("input", "filler").put("store", false));
      }
      int calls = cloud.received().size();
      h.clock.advance(Duration.ofSeconds(30));

      Turn two = send(h, key, request(stream).put("input", "two").put("previous_response_id", one.id()));

      assertThat(two.status()).as(two.raw().body()).isEqualTo(200);
      assertThat(two.backend()).isEqualTo("local");
      assertThat(two.text()).isEqualTo("local heard: one|two");
      assertThat(cloud.received()).as("the open breaker keeps it local").hasSize(calls);
    }
  }
}
