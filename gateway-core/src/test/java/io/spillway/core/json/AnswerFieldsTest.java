package io.spillway.core.json;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Usage, error and model read from an answer without a tree ({@link AnswerSummary}, {@link EventFields})
 * are what the tree of the whole answer holds, on the upstream answers captured for the routing
 * tests and on answers that are not JSON at all.
 */
class AnswerFieldsTest {
  @Test
  void aBufferedAnswersSummaryIsWhatItsTreeHolds() throws IOException {
    for (String answer : answers()) {
      byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
      AnswerSummary read = AnswerSummary.read(bytes);
      JsonNode tree = tree(bytes);
      assertThat(read).as(answer).isEqualTo(AnswerSummary.of(tree));
    }
  }

  @Test
  void anAnswerThatIsNotOneJsonObjectHasNothingToRead() {
    for (String notJson : List.of("", "[]", "\"usage\"", "{\"usage\":{\"prompt_tokens\":1}", "{\"usage\":{}} {}",
        "{\"usage\":{},\"usage\":{}}", "<html>busy</html>", "{\"usage\":{\"prompt_tokens\":1},\"choices\":[}")) {
      assertThat(AnswerSummary.read(notJson.getBytes(StandardCharsets.UTF_8))).as(notJson).isEqualTo(AnswerSummary.NOT_JSON);
      assertThat(EventFields.read(notJson).object()).as(notJson).isFalse();
    }
  }

  @Test
  void aStreamEventsUsageIsWhatItsTreeHolds() throws IOException {
    List<String> events = new ArrayList<>(answers());
    events.add("{\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"output\":[{\"content\":[{\"text\":\"hi\"}]}],"
        + "\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}}");
    events.add("{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7,\"cache_read_input_tokens\":3}}}");
    events.add("{\"type\":\"message_delta\",\"usage\":{\"output_tokens\":9},\"message\":null}");
    events.add("{\"id\":\"c\",\"choices\":[],\"usage\":null,\"response\":[1,2],\"message\":\"text\"}");
    for (String event : events) {
      EventFields read = EventFields.read(event);
      JsonNode tree = tree(event.getBytes(StandardCharsets.UTF_8));
      assertThat(read.object()).isTrue();
      assertThat(read.type()).isEqualTo(tree.path("type").isTextual() ? tree.get("type").textValue() : null);
      assertThat(read.usage()).isEqualTo(tree.get("usage"));
      assertThat(read.responseUsage()).isEqualTo(tree.path("response").isObject() ? tree.get("response").get("usage") : null);
      assertThat(read.messageUsage()).isEqualTo(tree.path("message").isObject() ? tree.get("message").get("usage") : null);
    }
  }

  private static List<String> answers() throws IOException {
    List<String> out = new ArrayList<>();
    try (Stream<Path> files = Files.list(Path.of("../gateway-routing/src/test/resources/upstream"))) {
      for (Path file : files.sorted().toList()) {
        String text = Files.readString(file);
        if (text.strip().startsWith("{")) {
          out.add(text);
        }
      }
    }
    out.add(Files.readString(Path.of("../bench/chat-response.json")));
    out.add("{\"id\":\"x\",\"model\":7,\"usage\":{\"prompt_tokens\":\"12\"},\"error\":\"plain\"}");
    return out;
  }

  private static JsonNode tree(byte[] bytes) throws IOException {
    return Json.parse(bytes);
  }
}
