package io.spillway.core.prompt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Attribute;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.core.tokens.TokenTally;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A request's prompt, walked once: what each stage that reads the prompt takes from the body,
 * recorded in one pass over it, so that no stage walks the JSON tree itself. It records two things,
 * each in the order its reader takes it:
 *
 * <ul>
 *   <li>{@link #texts()}, the texts the model reads as shaping judges them: a completions prompt,
 *       chat message contents (a string or text parts), the Responses API's {@code instructions},
 *       {@code input} and tool outputs, the Messages API's {@code system} and message contents (a
 *       message's {@code tool_result} texts after its own). Signal scoring, the trim decision and
 *       the model step read these (gateway-shaping).
 *   <li>what the token estimate counts, summed by {@link #promptTokens}: every text leaf (names and
 *       tool-call arguments too; binary payloads and structural fields left out), token ids at one
 *       token each, the tokens each API's format adds per message, and tool definitions and response
 *       formats as their JSON text. Quota's estimate and {@code count_tokens} read this.
 * </ul>
 *
 * The two differ on purpose (the estimate counts more than what is worth trimming or scoring), and
 * are exactly what each reader computed when it walked the body itself. Which fields hold what, per
 * route, is in {@link OpenAiPrompt} and {@link MessagesPrompt}.
 *
 * <p>Made once per body of a request ({@link #of}), on first use, and shared by every copy of the
 * request; keyed by the body's identity, so a stage that passed a changed copy on (a trimmed body)
 * gets the walk of that copy, and shaping, which judges the body as the client sent it, keeps its
 * own. The texts are the very strings the parse made, so {@link io.spillway.core.tokens.PromptKeys}
 * hashes each once. Immutable; like the request's other attributes, read by one thread at a time.
 */
public final class PromptWalk {
  private static final Attribute<Map<ObjectNode, PromptWalk>> WALKS = Attribute.of("promptWalks");

  private final Route route;
  private final List<String> texts;
  /** What the estimate counts, in order. */
  private final List<Counted> counted;
  /** Tokens counted without the tokenizer: each message's framing, the reply primer, token ids. */
  private final long fixedTokens;

  private PromptWalk(Route route, List<String> texts, List<Counted> counted, long fixedTokens) {
    this.route = route;
    this.texts = Collections.unmodifiableList(texts);
    this.counted = counted;
    this.fixedTokens = fixedTokens;
  }

  /** The walk of the body {@code request} carries, made on first use. */
  public static PromptWalk of(GatewayRequest request) {
    return of(request, request.body());
  }

  /**
   * The walk of {@code body}, one of the bodies {@code request} carried (the client's, or a copy a
   * stage changed), made on first use and kept on the request.
   */
  public static PromptWalk of(GatewayRequest request, ObjectNode body) {
    Map<ObjectNode, PromptWalk> walks = request.attribute(WALKS);
    if (walks == null) {
      walks = new IdentityHashMap<>(4);
      request.setAttribute(WALKS, walks);
    }
    PromptWalk walk = walks.get(body);
    if (walk == null || walk.route != request.route()) {
      walk = walk(request.route(), body);
      walks.put(body, walk);
    }
    return walk;
  }

  /** A walk of {@code body} as a request of {@code route}, kept nowhere (for tests and tools). */
  public static PromptWalk walk(Route route, ObjectNode body) {
    Recorder out = new Recorder();
    switch (route) {
      case MESSAGES -> MessagesPrompt.walk(body, true, out);
      case MESSAGES_COUNT_TOKENS -> MessagesPrompt.walk(body, false, out);
      default -> OpenAiPrompt.walk(route, body, out);
    }
    return new PromptWalk(route, out.texts, out.counted, out.fixedTokens);
  }

  /** The route the body was walked as. */
  public Route route() {
    return route;
  }

  /** Every text the model reads, in order (see the class doc); unmodifiable. */
  public List<String> texts() {
    return texts;
  }

  /**
   * The prompt's tokens as the estimate counts them, with {@code tally} (its tokenizer, its bound on
   * what is tokenized, its memo). The texts are handed to the tally in the body's order, so its
   * bound falls where it did when each reader walked the body itself.
   */
  public long promptTokens(TokenTally tally) {
    long tokens = fixedTokens;
    for (Counted piece : counted) {
      tokens += switch (piece) {
        case Text text -> tally.count(text.value());
        case Definitions definitions -> tally.countJson(definitions.value());
        case WrittenJson json -> tally.count(Json.toString(json.value()));
      };
    }
    return tokens;
  }

  /**
   * Whether the model reads {@code part}'s {@code text}, as a part of a message's content: an object
   * with a string {@code text} whose {@code type} is {@code text}, {@code input_text} or
   * {@code output_text} (or missing).
   */
  static boolean isTextPart(JsonNode part) {
    if (!(part instanceof ObjectNode) || !part.path("text").isTextual()) {
      return false;
    }
    String type = part.path("type").asText("text");
    return type.equals("text") || type.equals("input_text") || type.equals("output_text");
  }

  /** One piece of what the estimate counts. */
  sealed interface Counted permits Text, Definitions, WrittenJson {}

  /** A text, counted with the tally (and its memo). */
  record Text(String value) implements Counted {}

  /** Tool definitions or a response format: counted as their JSON text, remembered by structure. */
  record Definitions(JsonNode value) implements Counted {}

  /** A JSON value counted as the text it is written as, each time (the Messages API's tools and tool inputs). */
  record WrittenJson(JsonNode value) implements Counted {}

  /** What a route's walk records, as it goes. */
  static final class Recorder {
    private final List<String> texts = new ArrayList<>();
    private final List<Counted> counted = new ArrayList<>();
    private long fixedTokens;

    /** A text the model reads (shaping's). */
    void read(String text) {
      texts.add(text);
    }

    /** A text the estimate counts. */
    void count(String text) {
      counted.add(new Text(text));
    }

    /** A text both read and counted. */
    void readAndCount(String text) {
      texts.add(text);
      counted.add(new Text(text));
    }

    void countDefinitions(JsonNode value) {
      counted.add(new Definitions(value));
    }

    void countWritten(JsonNode value) {
      counted.add(new WrittenJson(value));
    }

    /** Tokens the estimate adds without the tokenizer. */
    void fixed(long tokens) {
      fixedTokens += tokens;
    }
  }
}
