package io.spillway.app.api;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import io.spillway.app.testing.FakeLocalModel;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.app.testing.OpenAiStubs;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * An agent's turns repeat their instructions and history byte for byte, and the gateway takes those
 * repeated pieces, parsed, from its memo ({@code server.pieceMemory}), shared by every request that
 * carries them. Through a conversation on the cloud, through the failover to local (where the body
 * is translated for the local model) and back, every turn is answered, the cloud receives each body
 * as the client sent it, and the same body is translated for local the same way every time: no
 * stage changed a shared piece (with assertions on, as in every test run, the memo also checks each
 * piece it hands out against its bytes). Every tier, both local kinds, the Responses API and chat.
 */
class RepeatedPiecesTest {
  private static final Path CODEX = Path.of("../gateway-local-backend/src/test/resources/fixtures/codex");

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (String key : List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY)) {
      for (String kind : List.of("ollama", "openai")) {
        cases.add(Arguments.of(key.replace("-team-key", "").replace("sk-", ""), key, kind, "/v1/responses",
            "first-turn.json"));
        cases.add(Arguments.of(key.replace("-team-key", "").replace("sk-", ""), key, kind, "/v1/chat/completions",
            "first-turn.chat.json"));
      }
    }
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} local={2} {3}")
  @MethodSource("cases")
  void aConversationsRepeatedPiecesServeEveryTurnOnBothBackendsUnchanged(
      String tier, String key, String kind, String path, String fixture) throws IOException {
    ObjectNode first = (ObjectNode) Json.parse(java.nio.file.Files.readAllBytes(CODEX.resolve(fixture)));
    String items = path.endsWith("responses") ? "input" : "messages";
    ObjectNode second = first.deepCopy();
    ((ArrayNode) second.get(items)).addObject().put("type", "message").put("role", "user")
        .put("content", "Now run the whole test suite again and tell me which tests still fail, and why.");
    if (path.endsWith("completions")) {
      ((ObjectNode) second.get(items).get(second.get(items).size() - 1)).remove("type");
    }
    String turnOne = Json.toString(first);
    String turnTwo = Json.toString(second);

    try (FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = GatewayHarness.start(local.localYaml(kind))) {
      h.cloud.stubFor(post("/v1/responses").willReturn(OpenAiStubs.responseStream("o", "k")));
      h.cloud.stubFor(post("/v1/chat/completions").willReturn(OpenAiStubs.chatStream(true, "o", "k")));

      assertAnsweredBy(send(h, key, path, turnOne), "cloud");
      assertAnsweredBy(send(h, key, path, turnOne), "cloud");
      assertThat(bodiesSentUp(h, path)).as("the client's bytes, both times").containsExactly(turnOne, turnOne);

      assertThat(breaker(h, "open").statusCode()).isEqualTo(200);
      assertAnsweredBy(send(h, key, path, turnOne), "local");
      assertAnsweredBy(send(h, key, path, turnOne), "local");
      assertAnsweredBy(send(h, key, path, turnTwo), "local");
      List<JsonNode> chats = local.chats;
      assertThat(chats).hasSize(3);
      assertThat(chats.get(1)).as("the same body, translated the same way again").isEqualTo(chats.get(0));
      JsonNode longer = chats.get(2).get("messages");
      assertThat(longer.size()).isEqualTo(chats.get(0).get("messages").size() + 1);
      assertThat(longer.get(longer.size() - 1).get("content").toString()).contains("run the whole test suite");

      assertThat(breaker(h, "closed").statusCode()).isEqualTo(200);
      h.cloud.resetRequests();
      assertAnsweredBy(send(h, key, path, turnTwo), "cloud");
      assertAnsweredBy(send(h, key, path, turnOne), "cloud");
      assertThat(bodiesSentUp(h, path)).as("back on the cloud, still the client's bytes")
          .containsExactly(turnTwo, turnOne);
    }
  }

  private static void assertAnsweredBy(HttpResponse<String> answer, String backend) {
    assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
    assertThat(answer.headers().firstValue("x-spillway-backend")).hasValue(backend);
  }

  private static HttpResponse<String> send(GatewayHarness h, String key, String path, String body) {
    return h.send(HttpRequest.newBuilder(URI.create(h.url(path)))
        .timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json")
        .header("Authorization", "Bearer " + key)
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build());
  }

  private static List<String> bodiesSentUp(GatewayHarness h, String path) {
    return h.cloud.findAll(postRequestedFor(urlEqualTo(path))).stream().map(LoggedRequest::getBodyAsString).toList();
  }

  private static HttpResponse<String> breaker(GatewayHarness h, String state) {
    return h.send(HttpRequest.newBuilder(URI.create(h.url("/admin/breaker")))
        .header("Authorization", "Bearer " + GatewayHarness.ADMIN_TOKEN)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"state\":\"" + state + "\"}")).build());
  }
}
