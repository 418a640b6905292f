package io.spillway.app.conversations;

import static io.spillway.app.conversations.Turns.items;
import static io.spillway.app.conversations.Turns.reference;
import static io.spillway.app.conversations.Turns.request;
import static io.spillway.app.conversations.Turns.send;
import static io.spillway.app.conversations.Turns.user;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.errors.NotFoundException;
import com.openai.models.responses.Response;
import com.openai.core.http.StreamResponse;
import com.openai.models.responses.ResponseItem;
import com.openai.models.responses.ResponseStreamEvent;
import io.spillway.app.conversations.Turns.Turn;
import io.spillway.app.testing.FakeLocalModel;
import io.spillway.app.testing.FakeResponsesCloud;
import io.spillway.app.testing.GatewayHarness;
import io.spillway.core.json.Json;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What Spillway holds of stored responses, read back through the retrieval endpoints with the
 * official OpenAI Java SDK, and kept to the team that stored it; what it cannot carry is said.
 */
class StoredResponsesTest {
  private static final List<String> KEYS =
      List.of(GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY);

  private static GatewayHarness gateway(FakeResponsesCloud cloud, FakeLocalModel local) {
    return GatewayHarness.start("""
        cloud:
          baseUrl: %s
        %s""".formatted(cloud.baseUrl(), local.localYaml("ollama")));
  }

  private static String other(String key) {
    return key.equals(GatewayHarness.SILVER_KEY) ? GatewayHarness.BRONZE_KEY : GatewayHarness.SILVER_KEY;
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void theJavaSdkRetrievesListsAndDeletesAResponseServedLocally(String key) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      Turns.breaker(h, "open");
      Turn turn = send(h, key, request(false).set("input", items(user("what is a spillway?"))));
      assertThat(turn.backend()).isEqualTo("local");
      OpenAIClient sdk = h.openAi(key);

      Response retrieved = sdk.responses().retrieve(turn.id());
      assertThat(retrieved.id()).isEqualTo(turn.id());
      assertThat(retrieved._additionalProperties().get("store").asBoolean()).hasValue(true);
      assertThat(retrieved.output().get(0).asMessage().content().get(0).asOutputText().text())
          .isEqualTo("local heard: what is a spillway?");

      List<ResponseItem> inputs = sdk.responses().inputItems().list(turn.id()).data();
      assertThat(inputs).hasSize(1);
      assertThat(inputs.get(0).isResponseInputMessageItem()).isTrue();
      assertThat(inputs.get(0).asResponseInputMessageItem().content().get(0).asInputText().text())
          .isEqualTo("what is a spillway?");
      assertThat(inputs.get(0).asResponseInputMessageItem().id()).startsWith("msg_");

      sdk.responses().delete(turn.id());
      assertThatThrownBy(() -> sdk.responses().retrieve(turn.id())).isInstanceOf(NotFoundException.class);
      assertThat(cloud.paths).as("a local response is never asked of the cloud, but for the last 404")
          .containsExactly("GET /v1/responses/" + turn.id());
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void aResponseTheCloudIssuedIsReadFromTheStoreAndAnIdNobodyHoldsFromTheCloud(String key) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      Turn turn = send(h, key, request(true).put("input", "hello"));
      assertThat(turn.backend()).isEqualTo("cloud");
      OpenAIClient sdk = h.openAi(key);
      cloud.paths.clear();

      assertThat(sdk.responses().retrieve(turn.id()).id()).isEqualTo(turn.id());
      assertThat(cloud.paths).isEmpty();

      assertThatThrownBy(() -> sdk.responses().retrieve("resp_nobody")).isInstanceOf(NotFoundException.class);
      assertThat(cloud.paths).containsExactly("GET /v1/responses/resp_nobody");

      sdk.responses().delete(turn.id());
      assertThat(cloud.holds(turn.id())).as("deleting a cloud response deletes it there too").isFalse();
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void anotherTeamsKeyNeverReadsContinuesOrDeletesAStoredResponse(String key) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      String owner = other(key);
      Turn fromCloud = send(h, owner, request(false).put("input", "secret plan"));
      Turns.breaker(h, "open");
      Turn fromLocal = send(h, owner, request(false).put("input", "secret plan b"));
      Turns.breaker(h, "auto");
      cloud.paths.clear();
      OpenAIClient intruder = h.openAi(key);

      for (Turn stored : List.of(fromCloud, fromLocal)) {
        assertThatThrownBy(() -> intruder.responses().retrieve(stored.id())).isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> intruder.responses().inputItems().list(stored.id()))
            .isInstanceOf(NotFoundException.class);
        assertThatThrownBy(() -> intruder.responses().delete(stored.id())).isInstanceOf(NotFoundException.class);
        assertThat(h.openAi(owner).responses().retrieve(stored.id()).id()).isEqualTo(stored.id());

        Turn continued = send(h, key, request(false).put("input", "and?").put("previous_response_id", stored.id()));
        assertThat(continued.status()).isEqualTo(400);
        assertThat(continued.body().path("error").path("code").asText()).isEqualTo("previous_response_not_found");
        assertThat(continued.body().path("error").path("message").asText()).contains(stored.id());

        Turn referenced = send(h, key, request(false).set("input", items(reference(stored.messageId()))));
        assertThat(referenced.status()).isEqualTo(400);
        assertThat(referenced.body().path("error").path("message").asText()).contains(stored.messageId());
      }
      assertThat(cloud.paths).as("nothing of another team's is asked of the cloud").isEmpty();
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void streamTrueReplaysAStoredResponseOfEitherBackendAsTheResponsesApiStreamsIt(String key) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      Turn fromCloud = send(h, key, request(true).put("input", "hello cloud"));
      Turns.breaker(h, "open");
      Turn fromLocal = send(h, key, request(false).put("input", "hello local"));
      assertThat(List.of(fromCloud.backend(), fromLocal.backend())).containsExactly("cloud", "local");
      cloud.paths.clear();
      OpenAIClient sdk = h.openAi(key);

      for (Turn stored : List.of(fromCloud, fromLocal)) {
        Response whole = sdk.responses().retrieve(stored.id());
        List<ResponseStreamEvent> events;
        try (StreamResponse<ResponseStreamEvent> stream = sdk.responses().retrieveStreaming(stored.id())) {
          events = stream.stream().toList();
        }
        assertThat(events.get(0).isCreated()).isTrue();
        assertThat(events.get(0).asCreated().response().id()).isEqualTo(stored.id());
        assertThat(events.get(1).isInProgress()).isTrue();
        assertThat(events).anySatisfy(e -> assertThat(e.isContentPartAdded()).isTrue());
        String streamedText = events.stream().filter(ResponseStreamEvent::isOutputTextDelta)
            .map(e -> e.asOutputTextDelta().delta()).collect(java.util.stream.Collectors.joining());
        String text = whole.output().get(0).asMessage().content().get(0).asOutputText().text();
        assertThat(streamedText).isEqualTo(text);
        assertThat(events.stream().filter(ResponseStreamEvent::isOutputItemDone)
            .map(e -> e.asOutputItemDone().item().asMessage().id()))
            .containsExactly(whole.output().get(0).asMessage().id());
        Response completed = events.get(events.size() - 1).asCompleted().response();
        assertThat(completed.id()).isEqualTo(stored.id());
        assertThat(completed.output()).isEqualTo(whole.output());

        HttpResponse<String> resumed = h.get("/v1/responses/" + stored.id() + "?stream=true&starting_after=2", key);
        assertThat(resumed.statusCode()).isEqualTo(200);
        assertThat(resumed.headers().firstValue("content-type").orElse("")).startsWith("text/event-stream");
        List<JsonNode> after = resumed.body().lines().filter(l -> l.startsWith("data: "))
            .map(l -> Turns.parse(l.substring("data: ".length()))).toList();
        assertThat(after).hasSize(events.size() - 3);
        for (int i = 0; i < after.size(); i++) {
          assertThat(after.get(i).path("sequence_number").asInt()).isEqualTo(i + 3);
        }

        HttpResponse<String> notABoolean = h.get("/v1/responses/" + stored.id() + "?stream=yes", key);
        assertThat(notABoolean.statusCode()).isEqualTo(400);
        assertThat(Turns.parse(notABoolean.body()).path("error").path("param").asText()).isEqualTo("stream");
        HttpResponse<String> badResume = h.get("/v1/responses/" + stored.id() + "?stream=true&starting_after=-1", key);
        assertThat(badResume.statusCode()).isEqualTo(400);
        assertThat(Turns.parse(badResume.body()).path("error").path("param").asText()).isEqualTo("starting_after");
      }
      assertThat(cloud.paths).as("replayed from the store, not asked of the cloud").isEmpty();
    }
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void anIdNobodyHoldsIsA400NamingItOnLocalNeverA503(boolean stream) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      cloud.atCapacity(true);
      for (int i = 0; i < 3; i++) {
        send(h, GatewayHarness.GOLD_KEY, request(false).put("input", "filler").put("store", false));
      }
      for (String mode : List.of("auto", "open")) {
        Turns.breaker(h, mode);
        for (String key : KEYS) {
          Turn unknown = send(h, key, request(stream).put("input", "go on").put("previous_response_id", "resp_gone"));
          assertThat(unknown.status()).as(mode + " " + unknown.raw().body()).isEqualTo(400);
          assertThat(unknown.raw().headers().firstValue("retry-after")).isEmpty();
          JsonNode error = unknown.body().path("error");
          assertThat(error.path("code").asText()).isEqualTo("previous_response_not_found");
          assertThat(error.path("param").asText()).isEqualTo("previous_response_id");
          assertThat(error.path("message").asText()).isEqualTo("Previous response with id 'resp_gone' not found.");

          Turn reference = send(h, key, request(stream).set("input", items(reference("msg_gone"), user("go on"))));
          assertThat(reference.status()).isEqualTo(400);
          assertThat(reference.body().path("error").path("message").asText())
              .isEqualTo("Item with id 'msg_gone' not found.");
        }
      }
    }
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void storeFalseIsNotKeptAndTheAnswerSaysSo(boolean stream) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      Turns.breaker(h, "open");
      for (String key : KEYS) {
        Turn turn = send(h, key, request(stream).put("input", "codex style").put("store", false));
        assertThat(turn.status()).isEqualTo(200);
        assertThat(turn.body().get("store").asBoolean()).isFalse();
        assertThatThrownBy(() -> h.openAi(key).responses().retrieve(turn.id())).isInstanceOf(NotFoundException.class);
      }
    }
  }

  @ParameterizedTest(name = "stream={0}")
  @ValueSource(booleans = {false, true})
  void encryptedReasoningIsDroppedOnLocalAndNamedThenCarriedBackToTheCloud(boolean stream) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      for (String key : KEYS) {
        Turns.breaker(h, "auto");
        Turn one = send(h, key, request(stream).put("input", "think").set("include",
            Json.MAPPER.createArrayNode().add("reasoning.encrypted_content")));
        assertThat(one.body().path("output").path(0).path("type").asText()).isEqualTo("reasoning");

        Turns.breaker(h, "open");
        Turn two = send(h, key, request(stream).put("input", "more").put("previous_response_id", one.id()));
        assertThat(two.status()).as(two.raw().body()).isEqualTo(200);
        assertThat(two.raw().headers().firstValue("x-spillway-dropped-params").orElse(""))
            .contains("input.reasoning");
        assertThat(Json.toString(local.chats.get(local.chats.size() - 1))).doesNotContain("sealed-by-the-cloud");

        Turns.breaker(h, "closed");
        Turn three = send(h, key, request(stream).put("input", "done").put("previous_response_id", two.id()));
        assertThat(three.status()).as(three.raw().body()).isEqualTo(200);
        assertThat(three.text()).startsWith("cloud heard: think|more|done;");
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {GatewayHarness.GOLD_KEY, GatewayHarness.SILVER_KEY, GatewayHarness.BRONZE_KEY})
  void theConversationsApiPassesThroughOnTheCloudAndIsRefusedHonestlyOnLocal(String key) {
    try (FakeResponsesCloud cloud = new FakeResponsesCloud();
        FakeLocalModel local = new FakeLocalModel();
        GatewayHarness h = gateway(cloud, local)) {
      HttpResponse<String> created = h.send(HttpRequest.newBuilder(URI.create(h.url("/v1/conversations")))
          .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
          .timeout(Duration.ofSeconds(20))
          .POST(HttpRequest.BodyPublishers.ofString("{\"metadata\":{\"topic\":\"demo\"}}")).build());
      assertThat(created.statusCode()).isEqualTo(200);
      assertThat(Turns.parse(created.body()).path("id").asText()).startsWith("conv_cloud");
      assertThat(cloud.paths).contains("POST /v1/conversations");

      Turns.breaker(h, "open");
      Turn onLocal = send(h, key, request(false).put("input", "hi").put("conversation", "conv_cloud1"));
      assertThat(onLocal.status()).isEqualTo(400);
      assertThat(onLocal.body().path("error").path("code").asText()).isEqualTo("unsupported_on_local");
      assertThat(onLocal.body().path("error").path("param").asText()).isEqualTo("conversation");
    }
  }
}
