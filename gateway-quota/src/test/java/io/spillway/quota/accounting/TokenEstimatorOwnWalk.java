package io.spillway.quota.accounting;

// The estimator as it was just before the prompt was walked once (commit cffd118), walking the body
// itself, kept verbatim but for its name (and MessageTextsBefore for core's MessageTexts) as the
// reference PromptWalkEstimateTest compares the estimator with at every bound on tokenized text.

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.core.tokens.TokenTally;
import java.util.Set;

/**
 * Estimates what a request will cost before it is sent: its prompt counted with the model's real
 * tokenizer ({@link TokenCounter}, the one shaping uses), plus the most it may generate ({@code max_completion_tokens},
 * {@code max_tokens} or {@code max_output_tokens}, else {@code quota.defaultMaxTokens}), times
 * {@code n} choices.
 *
 * <p>The prompt is every piece of text the model reads: message contents (strings or text parts),
 * names, tool-call arguments, tool definitions, {@code instructions}, {@code input} items. Binary
 * parts (images, audio, files) are not counted; the settlement with the backend's reported usage
 * corrects the estimate afterwards. Special-token text is counted as ordinary text. At most
 * {@code maxTokenizedChars} characters of a request are tokenized; the rest is estimated from its
 * length ({@link TokenTally}), so no prompt costs more than that to estimate. Tool definitions are
 * counted as their JSON text, which is written out only the first time a definition is seen (then
 * its count is remembered by its {@link io.spillway.core.tokens.TextKey#ofJson structure}); each text
 * is keyed once per request ({@link PromptKeys}, shared with shaping). Thread-safe.
 */
public final class TokenEstimatorOwnWalk {
  /** Tokens OpenAI's chat format adds around every message, and to prime the reply. */
  private static final int PER_MESSAGE = 3;
  private static final int REPLY_PRIMER = 3;
  private static final Set<String> BINARY_KEYS =
      Set.of("image_url", "input_audio", "audio", "file", "file_data", "file_id", "image", "data", "url");
  private static final Set<String> NON_TEXT_KEYS = Set.of("type", "role", "id", "call_id", "status", "detail");

  private final int defaultMaxTokens;
  private final long maxTokenizedChars;

  /** An estimator that tokenizes whole prompts, however long (for tests and tools). */
  public TokenEstimatorOwnWalk(int defaultMaxTokens) {
    this(defaultMaxTokens, Long.MAX_VALUE);
  }

  public TokenEstimatorOwnWalk(int defaultMaxTokens, long maxTokenizedChars) {
    this.defaultMaxTokens = defaultMaxTokens;
    this.maxTokenizedChars = maxTokenizedChars;
  }

  /** A request's estimate. */
  public record Estimate(long promptTokens, long maxOutputTokens) {
    public long total() {
      return promptTokens + maxOutputTokens;
    }
  }

  public Estimate estimate(GatewayRequest request) {
    ObjectNode body = request.body();
    TokenTally encoding = TokenCounter.forModel(request.model()).tally(maxTokenizedChars, PromptKeys.of(request));
    long prompt;
    long maxOutput;
    long choices = Math.max(1, positive(body.get("n"), 1));
    switch (request.route()) {
      case CHAT_COMPLETIONS -> {
        prompt = chatPrompt(encoding, body);
        maxOutput = positive(body.get("max_completion_tokens"), positive(body.get("max_tokens"), defaultMaxTokens));
      }
      case COMPLETIONS -> {
        prompt = text(encoding, body.get("prompt")) + text(encoding, body.get("suffix"));
        maxOutput = positive(body.get("max_tokens"), defaultMaxTokens);
      }
      case RESPONSES -> {
        prompt = text(encoding, body.get("instructions")) + text(encoding, body.get("input"))
            + tools(encoding, body.get("tools"));
        maxOutput = positive(body.get("max_output_tokens"), defaultMaxTokens);
        choices = 1;
      }
      case MESSAGES, MESSAGES_COUNT_TOKENS -> {
        prompt = MessageTextsBefore.promptTokens(encoding, body);
        maxOutput = request.route() == Route.MESSAGES ? positive(body.get("max_tokens"), defaultMaxTokens) : 0;
        choices = 1;
      }
      case EMBEDDINGS -> {
        prompt = text(encoding, body.get("input"));
        maxOutput = 0;
        choices = 1;
      }
      default -> {
        prompt = 0;
        maxOutput = 0;
      }
    }
    return new Estimate(prompt, maxOutput * choices);
  }

  private long chatPrompt(TokenTally encoding, ObjectNode body) {
    long tokens = REPLY_PRIMER;
    JsonNode messages = body.get("messages");
    if (messages != null && messages.isArray()) {
      for (JsonNode message : messages) {
        tokens += PER_MESSAGE + text(encoding, message);
      }
    }
    return tokens + tools(encoding, body.get("tools")) + tools(encoding, body.get("functions"))
        + tools(encoding, body.get("response_format"));
  }

  private long tools(TokenTally encoding, JsonNode definitions) {
    if (definitions == null || definitions.isNull() || definitions.isMissingNode()) {
      return 0;
    }
    return encoding.countJson(definitions);
  }

  /** Tokens of every text leaf under {@code node}, skipping binary payloads and structural fields. */
  private long text(TokenTally encoding, JsonNode node) {
    if (node == null || node.isNull()) {
      return 0;
    }
    if (node.isTextual()) {
      return encoding.count(node.textValue());
    }
    if (node.isNumber()) {
      return 1; // a token id in a pre-tokenized prompt
    }
    long tokens = 0;
    if (node.isArray()) {
      for (JsonNode item : node) {
        tokens += text(encoding, item);
      }
    } else if (node.isObject()) {
      for (var field : node.properties()) {
        String key = field.getKey();
        if (!BINARY_KEYS.contains(key) && !NON_TEXT_KEYS.contains(key)) {
          tokens += text(encoding, field.getValue());
        }
      }
    }
    return tokens;
  }

  /** A tally for {@code model}'s texts with this estimator's bound on what is tokenized. */
  public TokenTally tally(String model) {
    return TokenCounter.forModel(model).tally(maxTokenizedChars);
  }

  /** Tokens of {@code text} with the tokenizer of {@code model}. */
  public long count(String model, String text) {
    return TokenCounter.forModel(model).count(text);
  }

  private static long positive(JsonNode value, long otherwise) {
    if (value != null && value.canConvertToLong() && value.asLong() > 0) {
      return value.asLong();
    }
    return otherwise;
  }

  public int defaultMaxTokens() {
    return defaultMaxTokens;
  }
}
