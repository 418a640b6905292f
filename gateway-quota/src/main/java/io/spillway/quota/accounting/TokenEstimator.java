package io.spillway.quota.accounting;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.Route;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.core.tokens.TokenTally;

/**
 * Estimates what a request will cost before it is sent: its prompt counted with the model's real
 * tokenizer ({@link TokenCounter}, the one shaping uses), plus the most it may generate ({@code max_completion_tokens},
 * {@code max_tokens} or {@code max_output_tokens}, else {@code quota.defaultMaxTokens}), times
 * {@code n} choices.
 *
 * <p>The prompt is every piece of text the model reads: message contents (strings or text parts),
 * names, tool-call arguments, tool definitions, {@code instructions}, {@code input} items. Binary
 * parts (images, audio, files) are not counted; the settlement with the backend's reported usage
 * corrects the estimate afterwards. Special-token text is counted as ordinary text. The estimator
 * does not walk the body: it counts what the request's {@link PromptWalk} recorded (made once per
 * body and shared with shaping), for the body this stage sees. At most {@code maxTokenizedChars}
 * characters of a request are tokenized; the rest is estimated from its length ({@link TokenTally}),
 * so no prompt costs more than that to estimate. Tool definitions are counted as their JSON text,
 * which is written out only the first time a definition is seen (then its count is remembered by its
 * {@link io.spillway.core.tokens.TextKey#ofJson structure}); each text is keyed once per request
 * ({@link PromptKeys}, shared with shaping). Thread-safe.
 */
public final class TokenEstimator {
  private final int defaultMaxTokens;
  private final long maxTokenizedChars;

  /** An estimator that tokenizes whole prompts, however long (for tests and tools). */
  public TokenEstimator(int defaultMaxTokens) {
    this(defaultMaxTokens, Long.MAX_VALUE);
  }

  public TokenEstimator(int defaultMaxTokens, long maxTokenizedChars) {
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
    long prompt = PromptWalk.of(request).promptTokens(encoding);
    long maxOutput;
    long choices = Math.max(1, positive(body.get("n"), 1));
    switch (request.route()) {
      case CHAT_COMPLETIONS ->
          maxOutput = positive(body.get("max_completion_tokens"), positive(body.get("max_tokens"), defaultMaxTokens));
      case COMPLETIONS -> maxOutput = positive(body.get("max_tokens"), defaultMaxTokens);
      case RESPONSES -> {
        maxOutput = positive(body.get("max_output_tokens"), defaultMaxTokens);
        choices = 1;
      }
      case MESSAGES, MESSAGES_COUNT_TOKENS -> {
        maxOutput = request.route() == Route.MESSAGES ? positive(body.get("max_tokens"), defaultMaxTokens) : 0;
        choices = 1;
      }
      case EMBEDDINGS -> {
        maxOutput = 0;
        choices = 1;
      }
      default -> maxOutput = 0;
    }
    return new Estimate(prompt, maxOutput * choices);
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
