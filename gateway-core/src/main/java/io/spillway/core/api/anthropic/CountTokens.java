package io.spillway.core.api.anthropic;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Terminal;
import io.spillway.core.prompt.PromptWalk;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.TokenCounter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The terminal of {@code POST /v1/messages/count_tokens}: answers {@code {"input_tokens": n}} itself,
 * counted from the request's {@link PromptWalk} with the gateway's tokenizer, so the count is there whichever
 * backend would serve the request and costs no upstream call. Claude's own tokenizer is not public:
 * the number is an estimate of the same kind quota accounting makes before a call. Stateless.
 */
public final class CountTokens implements Terminal {
  /** Texts longer than this are estimated from their length rather than tokenized. */
  private final long maxTokenizedChars;

  public CountTokens(long maxTokenizedChars) {
    this.maxTokenizedChars = maxTokenizedChars;
  }

  @Override
  public CompletionStage<GatewayResponse> handle(GatewayRequest request) {
    long tokens = PromptWalk.of(request).promptTokens(
        TokenCounter.forModel(request.model()).tally(maxTokenizedChars, PromptKeys.of(request)));
    ObjectNode answer = Json.object().put("input_tokens", tokens);
    return CompletableFuture.completedFuture(GatewayResponse.json(200, Json.toBytes(answer)));
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "CountTokens";
  }
}
