package io.spillway.quota.responses;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which stored response an item id leads to. The Vercel AI SDK refers to every earlier answer with
 * an {@code item_reference}; Spillway stores each later exchange with those references resolved into
 * its input, so the same item is held by the response that issued it and by every one after it. The
 * item must still lead to the one that issued it: that response's origin says whether a cloud route
 * issued the id (and may be sent the reference as it is) or not (and must be sent the item).
 */
class ResponseStoreItemOwnerTest {
  private final FakeClock clock = FakeClock.at("2026-11-10T10:00:00Z");
  @TempDir Path dir;

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"memory", "redis"})
  void anItemLeadsToTheResponseThatIssuedItNotToALaterOneThatCarriesItInItsInput(String kind) {
    RedisServer redis = kind.equals("redis") ? RedisServer.start(dir.resolve("redis")) : null;
    RedisLink link = redis == null ? null : RedisLink.open(redis.uri(), Duration.ofSeconds(2));
    ResponseStore store = kind.equals("redis")
        ? new RedisResponseStore(link, Duration.ofSeconds(2), ResponsesConfig.DEFAULTS, clock)
        : MvResponseStore.inMemory(ResponsesConfig.DEFAULTS, clock);
    try {
      ObjectNode localAnswer = message("msg_local_1", "assistant", "Answered on local.");
      store.put("web", stored("resp_local_1", "local", List.of(message("msg_user_1", "user", "Hi")), localAnswer));
      ObjectNode cloudAnswer = message("msg_cloud_2", "assistant", "Answered by the cloud.");
      store.put("web", stored("resp_cloud_2", "openai",
          List.of(message("msg_user_1", "user", "Hi"), localAnswer, message("msg_user_2", "user", "More")),
          cloudAnswer));

      assertThat(store.responsesOfItems("web", List.of("msg_local_1", "msg_user_1", "msg_cloud_2")))
          .isEqualTo(Map.of("msg_local_1", "resp_local_1", "msg_user_1", "resp_local_1",
              "msg_cloud_2", "resp_cloud_2"));
      assertThat(store.get("web", "resp_local_1").origin()).isEqualTo("local");
    } finally {
      store.close();
      if (link != null) {
        link.close();
      }
      if (redis != null) {
        redis.close();
      }
    }
  }

  private StoredResponse stored(String id, String origin, List<ObjectNode> input, ObjectNode output) {
    ArrayNode items = Json.MAPPER.createArrayNode();
    input.forEach(items::add);
    ObjectNode response = Json.object().put("id", id).put("object", "response").put("status", "completed");
    response.putArray("output").add(output);
    return new StoredResponse(id, origin, null, List.of(), items, response, clock.millis());
  }

  private static ObjectNode message(String id, String role, String text) {
    ObjectNode message = Json.object().put("id", id).put("type", "message").put("role", role);
    message.putArray("content").addObject().put("type", "assistant".equals(role) ? "output_text" : "input_text")
        .put("text", text);
    return message;
  }
}
