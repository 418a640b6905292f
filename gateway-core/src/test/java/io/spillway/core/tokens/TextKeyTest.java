package io.spillway.core.tokens;

import static org.assertj.core.api.Assertions.assertThat;

import io.spillway.core.json.Json;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A JSON value's key follows the JSON text it would be written as, not how the client spelled it. */
class TextKeyTest {
  @Test
  void valuesWrittenAsTheSameJsonTextShareAKey() throws IOException {
    assertThat(TextKey.ofJson(Json.parse("{\"a\": [1, \"b\", true, null]}")))
        .isEqualTo(TextKey.ofJson(Json.parse("{ \"\\u0061\" :[1,\"b\",true,null] }")));
  }

  @Test
  void valuesWrittenAsOtherJsonTextsHaveOtherKeys() throws IOException {
    List<String> values = List.of("[\"ab\"]", "[\"a\",\"b\"]", "{\"a\":\"b\"}", "{\"b\":\"a\"}", "[\"1\"]", "[1]",
        "{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}", "[[]]", "[{}]", "[null]", "[\"null\"]", "[true]", "[\"t\"]");
    for (String a : values) {
      for (String b : values) {
        if (!a.equals(b)) {
          assertThat(TextKey.ofJson(Json.parse(a))).as("%s vs %s", a, b).isNotEqualTo(TextKey.ofJson(Json.parse(b)));
        }
      }
    }
  }

  @Test
  void aRequestHashesEachTextOnce() {
    PromptKeys keys = new PromptKeys();
    String text = "a prompt text the stages all read";
    assertThat(keys.key(text)).isSameAs(keys.key(text)).isEqualTo(TextKey.of(text));
  }
}
