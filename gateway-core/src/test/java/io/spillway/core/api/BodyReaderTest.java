package io.spillway.core.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.JsonMutator;
import io.spillway.core.testing.PromptBodies;
import io.spillway.core.tokens.PromptPiece;
import io.spillway.core.tokens.PromptPieces;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The body reader that takes repeated pieces from the memo gives every body exactly the outcome of
 * the whole parse: the same tree, or the same client error, on the first sight of a body and on
 * every later one.
 */
class BodyReaderTest {
  private static final String CODEX_TURN = "bench/codex-chat-request.json";

  @Test
  void everyCapturedBodyReadsAsTheWholeParseFirstSeenAgainAndFound() {
    PromptPieces memo = PromptPieces.keeping(64 << 20);
    for (PromptBodies.Body body : PromptBodies.captured()) {
      byte[] bytes = Json.toBytes(body.body());
      for (String sight : List.of("first seen", "seen again", "found")) {
        assertThat(read(body.route(), bytes, memo).body()).as("%s, %s", body, sight)
            .isEqualTo(RequestParser.parse(body.route(), "application/json", bytes));
      }
    }
  }

  @Test
  void eachTurnTakesTheItemsTheTurnsBeforeItRepeatedFromTheMemo() {
    PromptPieces memo = PromptPieces.keeping(64 << 20);
    ObjectNode one = codexTurn();
    ObjectNode two = withUserMessage(one, "Now run the tests again and tell me which of them still fail, with their output.");
    ObjectNode three = withUserMessage(two, "Fix the first failure, then run that test alone and show me what it prints.");
    int items = 0;
    for (String array : List.of("messages", "tools")) {
      for (JsonNode item : one.get(array)) {
        items += Json.toBytes(item).length >= PromptPieces.PROBE ? 1 : 0;
      }
    }
    assertThat(items).isGreaterThan(12);

    BodyReader.Read first = read(Route.CHAT_COMPLETIONS, Json.toBytes(one), memo);
    assertThat(first.pieces()).as("an item seen for the first time is only marked").isEmpty();
    BodyReader.Read second = read(Route.CHAT_COMPLETIONS, Json.toBytes(two), memo);
    assertThat(second.pieces()).as("seen a second time, every item of 64 bytes or more is remembered").hasSize(items);
    BodyReader.Read third = read(Route.CHAT_COMPLETIONS, Json.toBytes(three), memo);
    assertThat(third.pieces()).as("the first turn's items, found; turn two's message, remembered").hasSize(items + 1);

    assertThat(third.body()).isEqualTo(three);
    for (String array : List.of("messages", "tools")) {
      for (int i = 0; i < one.get(array).size(); i++) {
        if (Json.toBytes(one.get(array).get(i)).length >= PromptPieces.PROBE) {
          assertThat(third.body().get(array).get(i)).as("%s %d is the second turn's tree", array, i)
              .isSameAs(second.body().get(array).get(i));
        }
      }
    }
    assertThat(read(Route.CHAT_COMPLETIONS, Json.toBytes(three), memo).pieces()).hasSize(items + 2);
  }

  private static ObjectNode withUserMessage(ObjectNode body, String text) {
    ObjectNode next = body.deepCopy();
    next.withArray("messages").addObject().put("role", "user").put("content", text);
    return next;
  }

  @Test
  void anItemThatSharesOnlyItsBeginningWithARememberedOneIsParsed() {
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    String start = "{\"role\":\"user\",\"content\":\"" + "x".repeat(80);
    byte[] first = body("[" + start + "A\"}]");
    byte[] second = body("[" + start + "B\"}]");
    read(Route.CHAT_COMPLETIONS, first, memo);
    read(Route.CHAT_COMPLETIONS, first, memo);
    BodyReader.Read read = read(Route.CHAT_COMPLETIONS, second, memo);
    assertThat(read.body()).isEqualTo(RequestParser.parse(Route.CHAT_COMPLETIONS, null, second));
    assertThat(read.body().get("messages").get(0).get("content").textValue()).endsWith("B");
  }

  @Test
  void aRememberedItemIsFoundWhereverItStandsAndHowEverTheBodyAroundItIsSpaced() {
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    String message = "{\"role\":\"system\",\"content\":\"You are a careful coding agent working in a repository.\"}";
    read(Route.CHAT_COMPLETIONS, body("[" + message + "]"), memo);
    read(Route.CHAT_COMPLETIONS, body("[" + message + "]"), memo);
    byte[] spaced = ("{ \"model\" : \"gpt-4o\" ,\n\t\"messages\" : [ {\"role\":\"user\",\"content\":\"hi\"} ,\r\n "
        + message + " ] , \"temperature\" : 0.25 }").getBytes(StandardCharsets.UTF_8);
    BodyReader.Read read = read(Route.CHAT_COMPLETIONS, spaced, memo);
    assertThat(read.body()).isEqualTo(RequestParser.parse(Route.CHAT_COMPLETIONS, null, spaced));
    assertThat(read.pieces()).hasSize(1);
  }

  @Test
  void bodiesTheReaderLeavesToTheWholeParseGetItsTreeOrItsError() {
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    String item = "{\"role\":\"user\",\"content\":\"a message long enough to be remembered by the memo, surely\"}";
    List<String> bodies = List.of(
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "]}",
        "\uFEFF{\"model\":\"gpt-4o\",\"messages\":[" + item + "]}",
        "{\"mod\\u0065l\":\"gpt-4o\",\"messages\":[" + item + "]}",
        "{\"model\":\"gpt-4o\",\"model\":\"gpt-4o\",\"messages\":[" + item + "]}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item.replace("\"content\"", "\"role\"") + "]}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "]} x",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + ",]}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "]",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item.substring(0, 50),
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"temperature\":01}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"temperature\":-0}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"max_tokens\":1e2}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"max_tokens\":123456789012}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"n\":tru}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"user\":\"tab\there\"}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"user\":\"a\\\"quote\"}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"stop\":[\"\\n\\n\", 1.5, null, true, [[]], {}]}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"x\":" + "[".repeat(61) + "]".repeat(61) + "}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"x\":" + "[".repeat(62) + "]".repeat(62) + "}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "],\"x\":" + "[".repeat(63) + "]".repeat(63) + "}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + "[".repeat(61) + "]".repeat(61) + "]}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + "[".repeat(62) + "]".repeat(62) + "]}",
        "{\"model\":\"gpt-4o\",\"messages\":[" + item + "], \"\u00e9t\u00e9\": \"\u65e5\u672c\u8a9e \ud83d\ude42\"}",
        "{}", "[]", "\"text\"", "{\"model\":\"gpt-4o\",\"messages\":[]}", "{\"model\" \"gpt-4o\"}");
    for (String text : bodies) {
      byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
      for (String sight : List.of("first seen", "seen again", "found")) {
        assertSameOutcome(Route.CHAT_COMPLETIONS, bytes, memo, text + " (" + sight + ")");
      }
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1L, 20261202L, 0x5eedL})
  void damagedBodiesGetTheWholeParsesOutcome(long seed) {
    JsonMutator mutator = new JsonMutator(seed);
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    Route[] routes = {Route.CHAT_COMPLETIONS, Route.RESPONSES, Route.MESSAGES};
    for (int i = 0; i < 3_000; i++) {
      byte[] bytes = mutator.next();
      Route route = routes[mutator.random().nextInt(routes.length)];
      assertSameOutcome(route, bytes, memo, "seed " + seed + " case " + i + " " + HexFormat.of().formatHex(bytes));
    }
  }

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {7L, 20261202L})
  void generatedBodiesPrintedCompactOrIndentedReadAsTheWholeParse(long seed) {
    Random random = new Random(seed);
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    Route[] routes = {Route.CHAT_COMPLETIONS, Route.RESPONSES, Route.MESSAGES, Route.COMPLETIONS};
    for (int i = 0; i < 1_500; i++) {
      Route route = routes[random.nextInt(routes.length)];
      ObjectNode body = PromptBodies.generated(random, route);
      byte[] bytes = random.nextBoolean() ? Json.toBytes(body) : indented(body);
      assertSameOutcome(route, bytes, memo, "seed " + seed + " case " + i + " " + new String(bytes, StandardCharsets.UTF_8));
    }
  }

  @Test
  void aNumberJacksonCannotReadIsAClientErrorWhicheverWayTheBodyIsRead() {
    byte[] bytes = body("[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":-2e40592458736701546063313402939");
    for (PromptPieces memo : List.of(PromptPieces.off(), PromptPieces.keeping(1 << 20))) {
      assertThatThrownBy(() -> read(Route.CHAT_COMPLETIONS, bytes, memo))
          .isInstanceOfSatisfying(GatewayException.class, e -> assertThat(e.status()).isEqualTo(400))
          .hasMessageContaining("a number the gateway cannot read");
    }
  }

  @Test
  void aMemoTakesNoMoreHeapThanItIsGiven() {
    PromptPieces memo = PromptPieces.keeping(4_096);
    for (int i = 0; i < 200; i++) {
      String message = "{\"role\":\"user\",\"content\":\"message " + i + " " + "y".repeat(100) + "\"}";
      read(Route.CHAT_COMPLETIONS, body("[" + message + "]"), memo);
      read(Route.CHAT_COMPLETIONS, body("[" + message + "]"), memo);
    }
    assertThat(memo.heapBytes()).isPositive().isLessThanOrEqualTo(4_096);
  }

  @Test
  void aMemoThatIsOffRemembersNothingAndTheBodyIsParsedWhole() {
    byte[] bytes = Json.toBytes(codexTurn());
    BodyReader.Read read = read(Route.CHAT_COMPLETIONS, bytes, PromptPieces.off());
    assertThat(read.pieces()).isEmpty();
    assertThat(read.body()).isEqualTo(codexTurn());
  }

  @Test
  void aStageThatChangedASharedPieceInPlaceIsCaughtWhenThePieceIsNextFound() {
    PromptPieces memo = PromptPieces.keeping(1 << 20);
    byte[] bytes = Json.toBytes(codexTurn());
    read(Route.CHAT_COMPLETIONS, bytes, memo);
    PromptPiece piece = read(Route.CHAT_COMPLETIONS, bytes, memo).pieces().getFirst();
    ((ObjectNode) piece.node()).put("content", "changed in place");
    assertThatThrownBy(() -> read(Route.CHAT_COMPLETIONS, bytes, memo))
        .isInstanceOf(AssertionError.class).hasMessageContaining("changed a shared request piece");
  }

  private static void assertSameOutcome(Route route, byte[] bytes, PromptPieces memo, String what) {
    ObjectNode whole = null;
    GatewayException wholeError = null;
    try {
      whole = RequestParser.parse(route, "application/json", bytes);
    } catch (GatewayException e) {
      wholeError = e;
    }
    try {
      ObjectNode read = read(route, bytes, memo).body();
      assertThat(wholeError).as("the whole parse refused what the reader accepted: %s", what).isNull();
      assertThat(read).as(what).isEqualTo(whole);
    } catch (GatewayException e) {
      assertThat(wholeError).as("the reader refused what the whole parse accepted (%s): %s", e.getMessage(), what)
          .isNotNull();
      assertThat(e.getMessage()).as(what).isEqualTo(wholeError.getMessage());
      assertThat(e.status()).as(what).isEqualTo(wholeError.status());
    }
  }

  private static BodyReader.Read read(Route route, byte[] bytes, PromptPieces memo) {
    return RequestParser.read(route, "application/json", bytes, memo);
  }

  private static byte[] body(String messages) {
    return ("{\"model\":\"gpt-4o\",\"messages\":" + messages + "}").getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] indented(ObjectNode body) {
    try {
      return Json.MAPPER.writer(new DefaultPrettyPrinter()).writeValueAsBytes(body);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static ObjectNode codexTurn() {
    return PromptBodies.captured().stream().filter(body -> body.name().equals(CODEX_TURN)).findFirst().orElseThrow()
        .body();
  }
}
