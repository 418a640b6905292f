package io.spillway.core.tokens;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import java.io.IOException;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
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
        "{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}", "[[]]", "[{}]", "[null]", "[\"null\"]", "[true]", "[\"t\"]",
        "[[\"a\"]]", "[[\"a\"],[]]", "[[],[\"a\"]]", "[]", "{}", "\"[]\"", "[[[]]]");
    for (String a : values) {
      for (String b : values) {
        if (!a.equals(b)) {
          assertThat(TextKey.ofJson(Json.parse(a))).as("%s vs %s", a, b).isNotEqualTo(TextKey.ofJson(Json.parse(b)));
        }
      }
    }
  }

  @Test
  void anArraysKeyIsTheSameWhetherItsItemsKeysWereKnownOrNot() throws IOException {
    JsonNode tools = Json.parse("[{\"type\":\"function\",\"name\":\"shell\"},{\"type\":\"custom\",\"name\":\"apply\"},[1,[2]]]");
    Map<JsonNode, TextKey> known = new IdentityHashMap<>();
    known.put(tools.get(0), TextKey.ofJson(tools.get(0)));
    known.put(tools.get(2).get(1), TextKey.ofJson(tools.get(2).get(1)));
    assertThat(TextKey.ofJson(tools, known::get)).isEqualTo(TextKey.ofJson(tools));
  }

  @Test
  void aRequestTakesTheKeysOfThePiecesItsBodyWasMadeOf() {
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    byte[] body = "[{\"type\":\"function\",\"name\":\"shell\",\"description\":\"Runs a shell command and returns its output.\"}]"
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(memo.remember(body, 1, body.length - 1, parse(body, 1, body.length - 1))).as("first seen").isNull();
    PromptPiece piece = memo.remember(body, 1, body.length - 1, parse(body, 1, body.length - 1));
    PromptKeys keys = new PromptKeys();
    keys.take(List.of(piece));
    String description = piece.node().get("description").textValue();
    assertThat(keys.key(description)).isSameAs(piece.textKeys().get(description)).isEqualTo(TextKey.of(description));
    assertThat(keys.key(piece.node())).isSameAs(piece.structure()).isEqualTo(TextKey.ofJson(piece.node()));
  }

  private static JsonNode parse(byte[] bytes, int from, int to) {
    try {
      return Json.MAPPER.readTree(bytes, from, to - from);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void aRequestHashesEachTextOnce() {
    PromptKeys keys = new PromptKeys();
    String text = "a prompt text the stages all read";
    assertThat(keys.key(text)).isSameAs(keys.key(text)).isEqualTo(TextKey.of(text));
  }
}
