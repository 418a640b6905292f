package io.spillway.core.responses;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How a request's stored state is expanded for each backend, without the pipeline. */
class StoredStateTest {
  private static ObjectNode message(String id, String role, String text) {
    return Json.object().put("id", id).put("type", "message").put("role", role).put("content", text);
  }

  private static StoredResponse stored(String id, String origin, ObjectNode in, JsonNode... out) {
    ArrayNode input = Json.MAPPER.createArrayNode().add(in);
    ObjectNode response = Json.object().put("id", id).put("object", "response");
    ArrayNode output = response.putArray("output");
    for (JsonNode item : out) {
      output.add(item);
    }
    return new StoredResponse(id, origin, null, List.of(), input, response, 0);
  }

  private static final ObjectNode REASONING =
      Json.object().put("id", "rs_1").put("type", "reasoning").put("encrypted_content", "sealed");
  private static final StoredResponse CLOUD_TURN =
      stored("resp_c", "openai", message("msg_u1", "user", "one"), REASONING, message("msg_c", "assistant", "a"));
  private static final StoredResponse LOCAL_TURN =
      stored("resp_l", "local", message("msg_u2", "user", "two"), message("msg_l", "assistant", "b"));

  private static ObjectNode request(String previous) {
    ObjectNode body = Json.object().put("model", "gpt-4.1").put("input", "three");
    if (previous != null) {
      body.put("previous_response_id", previous);
    }
    return body;
  }

  @Test
  void theCloudsOwnPreviousResponseIdPassesToItUntouched() {
    StoredState state = new StoredState("resp_c", List.of(CLOUD_TURN), Map.of());
    ObjectNode body = request("resp_c");

    assertThat(state.expandFor(body, "openai", false, new ArrayList<>())).isSameAs(body);
  }

  @Test
  void aPreviousResponseIdMintedOnLocalIsExpandedForTheCloudWithoutItsIdsOrForeignReasoning() {
    StoredState state = new StoredState("resp_l", List.of(CLOUD_TURN, LOCAL_TURN), Map.of());
    List<String> dropped = new ArrayList<>();

    ObjectNode out = state.expandFor(request("resp_l"), "azure", false, dropped);

    assertThat(out.has("previous_response_id")).isFalse();
    assertThat(out.get("input")).hasSize(5);
    assertThat(Json.toString(out.get("input"))).doesNotContain("\"id\"").doesNotContain("sealed");
    assertThat(out.get("input").get(4).get("content").asText()).isEqualTo("three");
    assertThat(dropped).containsExactly("input.reasoning");
  }

  @Test
  void onLocalEverythingIsExpandedAndTheNewInputComesLast() {
    StoredState state = new StoredState("resp_l", List.of(CLOUD_TURN, LOCAL_TURN), Map.of());

    ObjectNode out = state.expandFor(request("resp_l"), StoredState.LOCAL, true, new ArrayList<>());

    assertThat(out.get("input")).hasSize(6);
    assertThat(out.get("input").get(1).get("encrypted_content").asText())
        .as("the local translation drops and names it").isEqualTo("sealed");
    assertThat(out.get("input").get(5).get("content").asText()).isEqualTo("three");
  }

  @Test
  void anUnknownIdIsA400OnLocalAndPassesToTheCloud() {
    StoredState state = new StoredState("resp_x", List.of(), Map.of());

    assertThatThrownBy(() -> state.expandFor(request("resp_x"), StoredState.LOCAL, true, new ArrayList<>()))
        .isInstanceOfSatisfying(GatewayException.class, e -> {
          assertThat(e.getMessage()).isEqualTo("Previous response with id 'resp_x' not found.");
          assertThat(e.param()).isEqualTo("previous_response_id");
          assertThat(e.code()).isEqualTo("previous_response_not_found");
        });
    ObjectNode body = request("resp_x");
    assertThat(state.expandFor(body, "openai", false, new ArrayList<>())).isSameAs(body);
  }

  @Test
  void itemReferencesResolveUnlessTheServingRouteIssuedThem() {
    StoredState state = new StoredState(null, List.of(), Map.of(
        "msg_c", new StoredState.Held(message("msg_c", "assistant", "a"), "openai"),
        "msg_l", new StoredState.Held(message("msg_l", "assistant", "b"), "local")));
    ObjectNode body = Json.object().put("model", "gpt-4.1");
    body.putArray("input").add(Json.object().put("type", "item_reference").put("id", "msg_c"))
        .add(Json.object().put("type", "item_reference").put("id", "msg_l"))
        .add(Json.object().put("role", "user").put("content", "next"));

    ObjectNode cloud = state.expandFor(body, "openai", false, new ArrayList<>());
    assertThat(cloud.get("input").get(0).get("type").asText()).isEqualTo("item_reference");
    assertThat(cloud.get("input").get(1).get("content").asText()).isEqualTo("b");
    assertThat(cloud.get("input").get(1).has("id")).isFalse();

    ObjectNode local = state.expandFor(body, StoredState.LOCAL, true, new ArrayList<>());
    assertThat(local.get("input").get(0).get("content").asText()).isEqualTo("a");
    assertThat(local.get("input").get(1).get("content").asText()).isEqualTo("b");

    body.withArray("input").add(Json.object().put("type", "item_reference").put("id", "msg_gone"));
    assertThatThrownBy(() -> state.expandFor(body, StoredState.LOCAL, true, new ArrayList<>()))
        .hasMessage("Item with id 'msg_gone' not found.");
  }
}
