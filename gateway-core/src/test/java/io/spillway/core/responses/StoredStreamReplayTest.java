package io.spillway.core.responses;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.SseEvent;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A stored response told again as the Responses API streams it. */
class StoredStreamReplayTest {
  static ObjectNode response(String status, String output) throws Exception {
    return (ObjectNode) Json.parse("{\"id\":\"resp_1\",\"object\":\"response\",\"status\":\"" + status + "\","
        + "\"output\":" + output + ",\"usage\":{\"input_tokens\":5,\"output_tokens\":3,\"total_tokens\":8}}");
  }

  static List<JsonNode> data(List<SseEvent> events) {
    return events.stream().map(e -> {
      try {
        JsonNode data = Json.parse(e.data());
        assertThat(e.event()).isEqualTo(data.path("type").asText());
        return data;
      } catch (Exception x) {
        throw new IllegalStateException(x);
      }
    }).toList();
  }

  @Test
  void eachOutputItemIsToldByItsOwnEventsInOrderWithSequenceNumbers() throws Exception {
    ObjectNode stored = response("completed", """
        [{"id":"msg_1","type":"message","status":"completed","role":"assistant",
          "content":[{"type":"output_text","text":"Hi there","annotations":[]},{"type":"refusal","refusal":"No."}]},
         {"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"exec_command",
          "arguments":"{\\"cmd\\":\\"ls\\"}"},
         {"id":"ctc_1","type":"custom_tool_call","status":"completed","call_id":"call_2","name":"apply_patch",
          "input":"*** Begin Patch"},
         {"id":"rs_1","type":"reasoning","summary":[]}]""");

    List<JsonNode> events = data(StoredStreamReplay.of(stored, -1));

    assertThat(events.stream().map(e -> e.path("type").asText())).containsExactly(
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.done", "response.content_part.done", "response.content_part.added",
        "response.refusal.delta", "response.refusal.done", "response.content_part.done", "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.done", "response.output_item.done",
        "response.output_item.added", "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done", "response.output_item.done",
        "response.output_item.added", "response.output_item.done",
        "response.completed");
    for (int i = 0; i < events.size(); i++) {
      assertThat(events.get(i).path("sequence_number").asInt()).isEqualTo(i);
    }
    JsonNode created = events.get(0).path("response");
    assertThat(created.path("status").asText()).isEqualTo("in_progress");
    assertThat(created.path("output").isEmpty()).isTrue();
    assertThat(created.path("usage").isNull()).isTrue();
    assertThat(events.get(2).path("item").path("content").isEmpty()).isTrue();
    assertThat(events.get(4).path("delta").asText()).isEqualTo("Hi there");
    assertThat(events.get(9).path("refusal").asText()).isEqualTo("No.");
    assertThat(events.get(9).path("content_index").asInt()).isEqualTo(1);
    assertThat(events.get(12).path("item").path("arguments").asText()).isEmpty();
    assertThat(events.get(14).path("arguments").asText()).isEqualTo("{\"cmd\":\"ls\"}");
    assertThat(events.get(14).path("output_index").asInt()).isEqualTo(1);
    assertThat(events.get(18).path("input").asText()).isEqualTo("*** Begin Patch");
    assertThat(events.get(events.size() - 1).path("response")).isEqualTo(stored);
    assertThat(stored.path("status").asText()).as("the stored response is left as it was").isEqualTo("completed");
  }

  @Test
  void anIncompleteResponseEndsWithResponseIncompleteAndStartingAfterResumes() throws Exception {
    ObjectNode stored = response("incomplete", "[{\"id\":\"msg_1\",\"type\":\"message\",\"status\":\"incomplete\","
        + "\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"cut\",\"annotations\":[]}]}]");

    List<JsonNode> all = data(StoredStreamReplay.of(stored, -1));
    List<JsonNode> resumed = data(StoredStreamReplay.of(stored, 5));

    assertThat(all.get(all.size() - 1).path("type").asText()).isEqualTo("response.incomplete");
    assertThat(resumed).containsExactlyElementsOf(all.subList(6, all.size()));
    assertThat(StoredStreamReplay.of(stored, 1000)).isEmpty();
  }
}
