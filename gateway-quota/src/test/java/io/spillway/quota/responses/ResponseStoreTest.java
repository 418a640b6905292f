package io.spillway.quota.responses;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.DataSize;
import io.spillway.config.ResponsesConfig;
import io.spillway.core.json.Json;
import io.spillway.core.responses.ResponseStore;
import io.spillway.core.responses.StoredResponse;
import io.spillway.core.testing.FakeClock;
import io.spillway.redis.RedisLink;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The response store's rules, held by each implementation: the embedded one (in memory and in a
 * file) and Redis (a real redis-server).
 */
class ResponseStoreTest {
  private static final ResponsesConfig SMALL = new ResponsesConfig(true, DataSize.ofKibibytes(4), Duration.ofHours(1), 100);

  @TempDir Path dir;
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  private RedisServer redis;
  private RedisLink link;
  private ResponseStore store;

  @AfterEach
  void stop() {
    if (store != null) {
      store.close();
    }
    if (link != null) {
      link.close();
    }
    if (redis != null) {
      redis.close();
    }
  }

  interface Opener extends BiFunction<ResponseStoreTest, ResponsesConfig, ResponseStore> {}

  static Stream<Arguments> stores() {
    return Stream.of(
        Arguments.of("memory", (Opener) (test, config) -> MvResponseStore.inMemory(config, test.clock)),
        Arguments.of("embedded", (Opener) (test, config) -> MvResponseStore.open(test.dir, config, test.clock)),
        Arguments.of("redis", (Opener) (test, config) -> {
          if (test.redis == null) {
            test.redis = RedisServer.start(test.dir.resolve("redis"));
          }
          test.link = RedisLink.open(test.redis.uri(), Duration.ofSeconds(2));
          return new RedisResponseStore(test.link, Duration.ofSeconds(2), config, test.clock);
        }));
  }

  private StoredResponse response(String id, String text) {
    ArrayNode input = Json.MAPPER.createArrayNode();
    input.addObject().put("id", "in_" + id).put("type", "message").put("role", "user").put("content", text);
    ObjectNode response = Json.object().put("id", id).put("object", "response");
    response.putArray("output").addObject().put("id", "msg_" + id).put("type", "message").put("role", "assistant")
        .put("content", text);
    return new StoredResponse(id, "local", null, List.of(), input, response, clock.millis());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aTeamReadsWhatItStoredAndNoOtherTeamDoes(String name, Opener open) {
    store = open.apply(this, ResponsesConfig.DEFAULTS);
    store.put("web", response("resp_1", "hello"));

    assertThat(store.get("web", "resp_1").output().get(0).get("content").asText()).isEqualTo("hello");
    assertThat(store.get("sandbox", "resp_1")).isNull();
    assertThat(store.heldByAnotherTeam("sandbox", "resp_1")).isTrue();
    assertThat(store.heldByAnotherTeam("sandbox", "msg_resp_1")).as("its items too").isTrue();
    assertThat(store.heldByAnotherTeam("web", "resp_1")).isFalse();
    assertThat(store.responsesOfItems("web", Set.of("msg_resp_1", "in_resp_1", "msg_none")))
        .isEqualTo(Map.of("msg_resp_1", "resp_1", "in_resp_1", "resp_1"));
    assertThat(store.responsesOfItems("sandbox", Set.of("msg_resp_1"))).isEmpty();
    assertThat(store.delete("sandbox", "resp_1")).isFalse();
    assertThat(store.get("web", "resp_1")).isNotNull();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void deletedResponsesAreGoneForTheirTeam(String name, Opener open) {
    store = open.apply(this, ResponsesConfig.DEFAULTS);
    store.put("web", response("resp_1", "hello"));

    assertThat(store.delete("web", "resp_1")).isTrue();

    assertThat(store.get("web", "resp_1")).isNull();
    assertThat(store.delete("web", "resp_1")).isFalse();
    assertThat(store.heldByAnotherTeam("sandbox", "resp_1")).isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void pastItsSizeBoundATeamLosesItsOldestResponsesFirstAndOtherTeamsNothing(String name, Opener open) {
    store = open.apply(this, SMALL);
    store.put("other", response("resp_other", "x".repeat(500)));
    for (int i = 0; i < 8; i++) {
      clock.advance(Duration.ofSeconds(1));
      store.put("web", response("resp_" + i, "x".repeat(500)));
    }

    assertThat(store.get("web", "resp_0")).as("the oldest is forgotten").isNull();
    assertThat(store.get("web", "resp_7")).isNotNull();
    assertThat(store.get("web", "resp_6")).isNotNull();
    assertThat(store.get("other", "resp_other")).isNotNull();
    long kept = Stream.iterate(0, i -> i + 1).limit(8).filter(i -> store.get("web", "resp_" + i) != null).count();
    assertThat(kept).isBetween(1L, 4L);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void aResponseOlderThanTheTtlIsGone(String name, Opener open) {
    store = open.apply(this, new ResponsesConfig(true, null, Duration.ofMinutes(10), null));
    store.put("web", response("resp_1", "hello"));
    clock.advance(Duration.ofMinutes(9));
    assertThat(store.get("web", "resp_1")).isNotNull();

    clock.advance(Duration.ofMinutes(2));
    assertThat(store.get("web", "resp_1")).isNull();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("stores")
  void getAllKeepsTheAskedOrderAndLeavesOutWhatIsMissing(String name, Opener open) {
    store = open.apply(this, ResponsesConfig.DEFAULTS);
    store.put("web", response("resp_1", "a"));
    store.put("web", response("resp_2", "b"));

    assertThat(store.getAll("web", List.of("resp_2", "resp_none", "resp_1")).stream().map(StoredResponse::id))
        .containsExactly("resp_2", "resp_1");
  }

  @Test
  void theEmbeddedStoreKeepsResponsesAcrossARestart() {
    store = MvResponseStore.open(dir, ResponsesConfig.DEFAULTS, clock);
    store.put("web", response("resp_1", "hello"));
    store.close();

    store = MvResponseStore.open(dir, ResponsesConfig.DEFAULTS, clock);

    assertThat(store.get("web", "resp_1").id()).isEqualTo("resp_1");
    assertThat(store.heldByAnotherTeam("sandbox", "resp_1")).isTrue();
  }
}
