package io.spillway.app.keys;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static io.spillway.app.testing.GatewayHarness.ADMIN_TOKEN;
import static io.spillway.app.testing.GatewayHarness.chatBody;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.quota.keys.KeyHashes;
import io.spillway.redis.testing.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** API keys outlive a restart with the embedded store, and reach every replica sharing a Redis within a second. */
class StoredKeysTest {
  @TempDir Path dir;

  private static GatewayHarness replica(String store) {
    GatewayHarness harness = GatewayHarness.start("store: " + store);
    harness.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatCompletion("ok")));
    return harness;
  }

  private static int chat(GatewayHarness gateway, String key) {
    return gateway.post("/v1/chat/completions", key, chatBody("gpt-4o", "hi", false)).statusCode();
  }

  @Test
  void aRestartWithTheEmbeddedStoreKeepsKeysAndTheirRotation() throws Exception {
    String store = "embedded:" + dir.resolve("data");
    AdminKeys.Created kept;
    AdminKeys.Created revoked;
    String rotatedKey;
    try (GatewayHarness first = replica(store)) {
      kept = AdminKeys.create(first, "{\"team\":\"ci\",\"tier\":\"gold\",\"models\":[\"gpt-4o\"]}");
      revoked = AdminKeys.create(first, "{\"team\":\"web\",\"tier\":\"silver\"}");
      rotatedKey = AdminKeys.json(first.post("/admin/keys/" + kept.id() + "/rotate", ADMIN_TOKEN,
          "{\"overlap\":\"1h\"}")).get("key").asText();
      assertThat(AdminKeys.revoke(first, revoked.id()).statusCode()).isEqualTo(200);
    }
    byte[] file = Files.readAllBytes(dir.resolve("data").resolve("keys.mv.db"));
    assertThat(new String(file, java.nio.charset.StandardCharsets.ISO_8859_1))
        .as("only hashes are stored").doesNotContain(kept.key(), rotatedKey)
        .contains(KeyHashes.hash(rotatedKey));

    try (GatewayHarness second = replica(store)) {
      assertThat(chat(second, rotatedKey)).isEqualTo(200);
      assertThat(chat(second, kept.key())).as("the old secret, within its overlap").isEqualTo(200);
      assertThat(chat(second, revoked.key())).isEqualTo(401);
      assertThat(second.post("/v1/chat/completions", rotatedKey, chatBody("gpt-4o-mini", "hi", false)).statusCode())
          .as("the allow-list survived too").isEqualTo(403);
    }
  }

  @Test
  void aKeyCreatedOnOneReplicaWorksOnAnotherWithinASecondAndARevokeReachesItAsFast() {
    try (RedisServer redis = RedisServer.start(dir.resolve("redis"));
        GatewayHarness a = replica(redis.uri());
        GatewayHarness b = replica(redis.uri())) {
      AdminKeys.Created created = AdminKeys.create(a, "{\"team\":\"ci\",\"tier\":\"bronze\"}");
      assertThat(chat(a, created.key())).isEqualTo(200);

      await("the key works on the other replica").atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
          .until(() -> chat(b, created.key()) == 200);
      assertThat(AdminKeys.json(b.get("/admin/keys", ADMIN_TOKEN)).get("keys").findValuesAsText("id"))
          .contains(created.id());

      assertThat(AdminKeys.revoke(a, created.id()).statusCode()).isEqualTo(200);
      assertThat(chat(a, created.key())).isEqualTo(401);
      await("the revoke reaches the other replica").atMost(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(20))
          .until(() -> chat(b, created.key()) == 401);

      for (GatewayHarness replica : List.of(a, b)) {
        assertThat(chat(replica, GatewayHarness.BRONZE_KEY)).as("config keys keep working beside them").isEqualTo(200);
      }
    }
  }
}
