package io.spillway.local.context;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.LocalContextConfig;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Attribute;
import io.spillway.core.pipeline.Route;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.trim.ContextTrimmer;
import io.spillway.trim.TrimSettings;
import io.spillway.local.context.Entry.Kind;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Fits a request to the local model's context window the way a coding agent needs it, and sizes
 * Ollama's {@code num_ctx} for it.
 *
 * <p>The prompt may take the usable window ({@code min(model window, local.context.maxTokens)})
 * less the room kept for the answer (see {@link ContextSize}). A request that fits is passed on as
 * it is. One that does not is cut, in this order, stopping as soon as it fits:
 *
 * <ol>
 *   <li>old tool outputs (every one but those of the last turn), oldest first, by the code-aware
 *       {@link ContextTrimmer};
 *   <li>the same outputs, oldest first, cut to {@code local.context.toolOutputTokens} (first and
 *       last lines, see {@link Excerpt});
 *   <li>whole units, oldest first: a message, or a tool-calling turn with all of its outputs, so a
 *       call and its output are kept or dropped together;
 *   <li>the last turn's tool outputs, trimmed, then cut like the others;
 *   <li>the code in the latest user message, by the code-aware trimmer.
 * </ol>
 *
 * Instructions (system and developer messages, the Responses API's {@code instructions}), tool
 * definitions and the latest user message are never dropped. A completions prompt keeps as much of
 * its end as fits. What still does not fit is reported ({@link Fit#fits()} false), not sent.
 *
 * <p>Token counts are estimates with Spillway's tokenizer plus {@code local.context.estimateMargin}.
 * Immutable and thread-safe; the body given is never modified (a copy is cut).
 */
public final class ContextFitter {
  /** The {@code x-spillway-degraded} step named when anything was cut. */
  public static final String STEP = "context_fit";

  /** The {@code num_ctx} an Ollama request is sent with; set on the request by the local backend. */
  public static final Attribute<Integer> NUM_CTX = Attribute.of("numCtx");

  /** Tokens a chat template adds around each message (role markers, separators). */
  private static final int PER_ENTRY = 4;

  private final LocalContextConfig config;
  private final ContextTrimmer trimmer;

  public ContextFitter(LocalContextConfig config, TrimSettings trim) {
    this.config = config;
    this.trimmer = new ContextTrimmer(trim);
  }

  /**
   * What a fitting decided.
   *
   * @param body the body to send: the one given when nothing was cut, else a cut copy
   * @param cut whether anything was shortened or dropped
   * @param fits whether the prompt fits the usable window even so
   * @param promptTokens the estimated prompt after fitting (margin included)
   * @param numCtx the {@code num_ctx} to send to Ollama
   * @param window the usable window the request was fitted to
   * @param summary what was done, for the log; empty when nothing
   */
  public record Fit(ObjectNode body, boolean cut, boolean fits, int promptTokens, int numCtx, int window,
      String summary) {}

  /** The window requests for a model of {@code modelWindow} tokens are fitted to, and the largest {@code num_ctx}. */
  public int usableWindow(int modelWindow) {
    return ContextSize.usableWindow(modelWindow, config);
  }

  /** Fits {@code body} (a request on {@code route}) to a model whose window is {@code modelWindow}. */
  public Fit fit(Route route, ObjectNode body, int modelWindow) {
    int window = ContextSize.usableWindow(modelWindow, config);
    int reserve = ContextSize.outputReserve(requestedOutput(route, body), window, config);
    int budget = raw(window - reserve);
    TokenCounter counter = TokenCounter.forModel(null);
    Work work = new Work(counter, budget);
    int before = switch (route) {
      case CHAT_COMPLETIONS, RESPONSES, COMPLETIONS -> measure(route, body, counter);
      default -> 0;
    };
    if (before <= budget || !fittable(route, body)) {
      // A body of another shape is left to the backend's translation, which answers it precisely.
      return new Fit(body, false, true, estimate(before),
          ContextSize.numCtx(estimate(before), reserve, window, config), window, "");
    }
    ObjectNode copy = body.deepCopy();
    int after = switch (route) {
      case COMPLETIONS -> fitPrompt(copy, work);
      case RESPONSES -> copy.get("input") instanceof ArrayNode input
          ? fitConversation(Conversation.ofResponses(input), fixed(route, copy, counter), work)
          : fitSingleInput(copy, fixed(route, copy, counter), work);
      default -> fitConversation(Conversation.ofChat((ArrayNode) copy.get("messages")), fixed(route, copy, counter),
          work);
    };
    int prompt = estimate(after);
    return new Fit(copy, work.changed(), after <= budget, prompt, ContextSize.numCtx(prompt, reserve, window, config),
        window, work.summary());
  }

  /**
   * Whether the body has the shape fitting works on; one that has not is left to the backend's
   * translation, which answers it with a precise 400.
   */
  private static boolean fittable(Route route, ObjectNode body) {
    return switch (route) {
      case CHAT_COMPLETIONS -> body.get("messages") instanceof ArrayNode;
      case RESPONSES -> body.get("input") instanceof ArrayNode || body.path("input").isTextual();
      case COMPLETIONS -> body.path("prompt").isTextual()
          || body.path("prompt").isArray() && body.get("prompt").size() == 1 && body.get("prompt").get(0).isTextual();
      default -> false;
    };
  }

  /** The answer's size the request asks for, or null. */
  static Integer requestedOutput(Route route, ObjectNode body) {
    List<String> fields = switch (route) {
      case RESPONSES -> List.of("max_output_tokens");
      case CHAT_COMPLETIONS -> List.of("max_completion_tokens", "max_tokens");
      default -> List.of("max_tokens");
    };
    for (String field : fields) {
      JsonNode value = body.get(field);
      if (value != null && value.canConvertToInt() && value.isNumber()) {
        return value.intValue();
      }
    }
    return null;
  }

  /** Raw (unmargined) tokens that estimate to at most {@code tokens}. */
  private int raw(int tokens) {
    return (int) Math.floor(Math.max(0, tokens) / (1 + config.estimateMargin()));
  }

  private int estimate(int raw) {
    return (int) Math.ceil(raw * (1 + config.estimateMargin()));
  }

  // --- measuring ---------------------------------------------------------------------------------

  private static int measure(Route route, ObjectNode body, TokenCounter counter) {
    int total = fixed(route, body, counter);
    JsonNode conversation = switch (route) {
      case CHAT_COMPLETIONS -> body.get("messages");
      case RESPONSES -> body.get("input");
      default -> null;
    };
    if (conversation != null && conversation.isArray()) {
      for (JsonNode entry : conversation) {
        total += tokens(entry, counter) + PER_ENTRY;
      }
    } else if (conversation != null) {
      total += tokens(conversation, counter) + PER_ENTRY;
    }
    return total;
  }

  /** What no fitting shortens: tool definitions, instructions, a completions suffix. */
  private static int fixed(Route route, ObjectNode body, TokenCounter counter) {
    int total = 0;
    JsonNode tools = body.get("tools");
    if (tools != null && tools.isArray() && !tools.isEmpty()) {
      total += counter.count(Json.toString(tools));
    }
    total += switch (route) {
      case RESPONSES -> tokens(body.get("instructions"), counter) + PER_ENTRY;
      case COMPLETIONS -> tokens(body.get("prompt"), counter) + tokens(body.get("suffix"), counter);
      default -> 0;
    };
    return total;
  }

  /** Tokens of every text in {@code node}, inline images (data: URLs) aside. */
  static int tokens(JsonNode node, TokenCounter counter) {
    if (node == null || node.isNull()) {
      return 0;
    }
    if (node.isTextual()) {
      String text = node.textValue();
      return text.startsWith("data:") ? 0 : counter.count(text);
    }
    int total = 0;
    if (node.isContainerNode()) {
      for (JsonNode child : node) {
        total += tokens(child, counter);
      }
    }
    return total;
  }

  // --- fitting -----------------------------------------------------------------------------------

  /** Running state of one fitting. */
  private static final class Work {
    final TokenCounter counter;
    final int budget;
    int total;
    int trimmed;
    int excerpted;
    int droppedEntries;
    int droppedUnits;
    boolean userTrimmed;
    boolean promptCut;

    Work(TokenCounter counter, int budget) {
      this.counter = counter;
      this.budget = budget;
    }

    boolean over() {
      return total > budget;
    }

    boolean changed() {
      return trimmed + excerpted + droppedEntries > 0 || userTrimmed || promptCut;
    }

    String summary() {
      List<String> parts = new ArrayList<>();
      if (trimmed > 0) {
        parts.add("trimmed " + trimmed + " tool outputs");
      }
      if (excerpted > 0) {
        parts.add("cut " + excerpted + " tool outputs to excerpts");
      }
      if (droppedUnits > 0) {
        parts.add("dropped the " + droppedUnits + " oldest turns (" + droppedEntries + " messages/items)");
      }
      if (userTrimmed) {
        parts.add("trimmed the code in the latest user message");
      }
      if (promptCut) {
        parts.add("cut the prompt");
      }
      return String.join(", ", parts);
    }
  }

  private int fitConversation(Conversation c, int fixed, Work w) {
    w.total = fixed;
    for (Entry e : c.entries) {
      e.tokens = tokens(e.node, w.counter) + PER_ENTRY;
      w.total += e.tokens;
    }
    Entry latestUser = c.latestUser();
    int finalUnit = c.finalUnit();
    List<Entry> oldOutputs = new ArrayList<>();
    List<Entry> lastOutputs = new ArrayList<>();
    for (Entry e : c.entries) {
      if (e.kind == Kind.OUTPUT) {
        (e.unit == finalUnit ? lastOutputs : oldOutputs).add(e);
      }
    }
    shortenOutputs(oldOutputs, w);

    Set<Integer> kept = new HashSet<>();
    kept.add(finalUnit);
    for (Entry e : c.entries) {
      if (e.kind == Kind.INSTRUCTION || e == latestUser) {
        kept.add(e.unit);
      }
    }
    for (int unit = 0; unit < c.units && w.over(); unit++) {
      if (kept.contains(unit)) {
        continue;
      }
      boolean any = false;
      for (Entry e : c.entries) {
        if (e.unit == unit && !e.dropped) {
          e.dropped = true;
          w.total -= e.tokens;
          w.droppedEntries++;
          any = true;
        }
      }
      if (any) {
        w.droppedUnits++;
      }
    }
    shortenOutputs(lastOutputs, w);
    if (w.over() && latestUser != null) {
      String text = latestUser.text();
      if (text != null) {
        String trimmed = fewerTokens(text, trimmer.trimMessage(text), w.counter);
        if (trimmed != text) {
          replace(latestUser, trimmed, w);
          w.userTrimmed = true;
        }
      }
    }
    c.removeDropped();
    return w.total;
  }

  /** Code-aware trimming of each output, oldest first, then excerpts, stopping once it fits. */
  private void shortenOutputs(List<Entry> outputs, Work w) {
    for (Entry e : outputs) {
      if (!w.over()) {
        return;
      }
      String text = e.text();
      if (text != null && !e.dropped) {
        String trimmed = fewerTokens(text, trimmer.trimMessage(text), w.counter);
        if (trimmed != text) {
          replace(e, trimmed, w);
          w.trimmed++;
        }
      }
    }
    for (Entry e : outputs) {
      if (!w.over()) {
        return;
      }
      String text = e.text();
      if (text != null && !e.dropped) {
        String excerpt = fewerTokens(text, Excerpt.of(text, config.toolOutputTokens(), w.counter), w.counter);
        if (excerpt != text) {
          replace(e, excerpt, w);
          w.excerpted++;
        }
      }
    }
  }

  private static void replace(Entry e, String text, Work w) {
    e.replaceText(text);
    int tokens = tokens(e.node, w.counter) + PER_ENTRY;
    w.total += tokens - e.tokens;
    e.tokens = tokens;
  }

  /** {@code shorter} when it really has fewer tokens than {@code text}, else {@code text} itself. */
  private static String fewerTokens(String text, String shorter, TokenCounter counter) {
    if (shorter == null || shorter == text || shorter.equals(text)) {
      return text;
    }
    return counter.count(shorter) < counter.count(text) ? shorter : text;
  }

  /** A Responses request whose {@code input} is one string: only its code can be trimmed. */
  private int fitSingleInput(ObjectNode body, int fixed, Work w) {
    JsonNode input = body.get("input");
    String text = input != null && input.isTextual() ? input.textValue() : null;
    w.total = fixed + tokens(input, w.counter) + PER_ENTRY;
    if (text != null) {
      String trimmed = fewerTokens(text, trimmer.trimMessage(text), w.counter);
      if (trimmed != text) {
        body.put("input", trimmed);
        w.total = fixed + w.counter.count(trimmed) + PER_ENTRY;
        w.userTrimmed = true;
      }
    }
    return w.total;
  }

  /**
   * A completions prompt keeps its end, as much of it as fits: that is what the model continues, and
   * the nearest lines matter most to it.
   */
  private int fitPrompt(ObjectNode body, Work w) {
    JsonNode prompt = body.get("prompt");
    boolean single = prompt != null && prompt.isArray() && prompt.size() == 1 && prompt.get(0).isTextual();
    String text = prompt != null && prompt.isTextual() ? prompt.textValue() : single ? prompt.get(0).textValue() : null;
    int suffix = tokens(body.get("suffix"), w.counter);
    w.total = suffix + tokens(prompt, w.counter);
    if (text == null) {
      return w.total;
    }
    String trimmed = tail(text, w.budget - suffix, w.counter);
    if (trimmed != text) {
      body.put("prompt", trimmed);
      w.promptCut = true;
    }
    w.total = suffix + w.counter.count(trimmed);
    return w.total;
  }

  /** The longest end of {@code text}, in whole lines where possible, within {@code budget} tokens. */
  private static String tail(String text, int budget, TokenCounter counter) {
    if (budget <= 0) {
      return "";
    }
    String[] lines = text.split("\n", -1);
    int used = 0;
    int start = lines.length;
    while (start > 0) {
      int cost = counter.count(lines[start - 1]) + 1;
      if (used + cost > budget) {
        break;
      }
      used += cost;
      start--;
    }
    if (start == lines.length) {
      int chars = Math.min(text.length(), budget * 3);
      return text.substring(text.length() - chars);
    }
    return String.join("\n", java.util.Arrays.asList(lines).subList(start, lines.length));
  }
}
