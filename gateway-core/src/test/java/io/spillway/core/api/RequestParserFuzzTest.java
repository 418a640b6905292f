package io.spillway.core.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.pipeline.Route;
import io.spillway.core.testing.JsonMutator;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A bounded property run over the request parser: for thousands of damaged bodies from fixed
 * seeds, it either accepts a body that satisfies every promise later stages rely on, or refuses it
 * with a client error. It never throws anything else and never hangs.
 */
class RequestParserFuzzTest {
  static final int CASES = 4_000;
  static final Route[] ROUTES = {Route.CHAT_COMPLETIONS, Route.COMPLETIONS, Route.RESPONSES};
  static final String[] CONTENT_TYPES = {null, "application/json", "application/json; charset=utf-8",
      "Application/JSON", "text/plain", "application/vnd.api+json", "application/json; charset=latin1", ""};

  /** A hang guard, not a speed target: a body that sent the parser into a loop would stop here. */
  @Timeout(value = 5, unit = TimeUnit.MINUTES)
  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1L, 20261110L, 0x5eedL})
  void parserEitherAcceptsAValidBodyOrRefusesWithAClientError(long seed) {
    JsonMutator mutator = new JsonMutator(seed);
    int accepted = 0;
    for (int i = 0; i < CASES; i++) {
      byte[] body = mutator.next();
      Route route = ROUTES[mutator.random().nextInt(ROUTES.length)];
      String contentType = CONTENT_TYPES[mutator.random().nextInt(CONTENT_TYPES.length)];
      int caseNumber = i;
      Supplier<String> repro = () -> "seed " + seed + " case " + caseNumber + " route " + route + " content-type " + contentType
          + " body " + HexFormat.of().formatHex(body);
      try {
        ObjectNode parsed = RequestParser.parse(route, contentType, body);
        assertAcceptable(route, parsed, repro);
        accepted++;
      } catch (GatewayException e) {
        assertThat(e.status()).as(repro).isIn(400, 415);
        assertThat(e.getMessage()).as(repro).isNotBlank();
        assertThat(e.toError().toBytes()).as(repro).isNotEmpty();
      } catch (RuntimeException | StackOverflowError e) {
        throw new AssertionError("parser threw " + e + " for " + repro.get(), e);
      }
    }
    assertThat(accepted).as("the run must also exercise the accepting path").isPositive();
  }

  /** What every stage after the parser may take for granted. */
  static void assertAcceptable(Route route, ObjectNode body, Supplier<String> repro) {
    JsonNode model = body.get("model");
    assertThat(model.isTextual() && !model.textValue().isBlank()).as(repro).isTrue();
    assertThat(model.textValue().chars().noneMatch(c -> c < 0x20 || c == 0x7f)).as(repro).isTrue();
    for (String field : new String[] {"max_tokens", "max_completion_tokens", "max_output_tokens"}) {
      JsonNode value = body.get(field);
      if (value != null && !value.isNull()) {
        assertThat(value.isIntegralNumber() && value.canConvertToLong()).as(repro).isTrue();
        assertThat(value.longValue()).as(repro).isBetween(1L, (long) RequestParser.MAX_TOKENS_LIMIT);
      }
    }
    JsonNode stream = body.get("stream");
    assertThat(stream == null || stream.isNull() || stream.isBoolean()).as(repro).isTrue();
    if (route == Route.CHAT_COMPLETIONS) {
      assertThat(body.get("messages").isArray()).as(repro).isTrue();
      for (JsonNode message : body.get("messages")) {
        assertThat(message.isObject() && message.path("role").isTextual()).as(repro).isTrue();
        JsonNode content = message.get("content");
        assertThat(content == null || content.isNull() || content.isTextual() || content.isArray()).as(repro).isTrue();
      }
    }
  }
}
