package io.spillway.shaping;

import io.spillway.core.tokens.TokenTally;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.core.tokens.TokenCounter;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Attribute;
import io.spillway.core.pipeline.Caller;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.prompt.PromptWalk;
import java.util.Collection;
import java.util.List;

/**
 * The typed values the shaping stages hand to each other on the request: no stage calls another or
 * reads another's headers. Shared with the rest of the pipeline: the degraded steps of the
 * {@link RequestOutcome}, {@link RequestAttributes#LOW_SIGNAL}, {@link RequestAttributes#PREFER_LOCAL} and
 * {@link RequestAttributes#MODEL_REWRITTEN_FROM}.
 *
 * <p>Every step judges the request as the client sent it (its texts, its stop sequences, its output
 * limit), not as an earlier step left it; what a step changes is the body it passes on.
 */
final class ShapingAttributes {
  /** Set by {@link LadderInterceptor}: how far down the ladder this request goes. */
  static final Attribute<ShapingPolicy.Plan> PLAN = Attribute.of("shapingPlan");

  /** The body as the client sent it, pinned by the first shaping stage that reads or copies it. */
  static final Attribute<ObjectNode> CLIENT_BODY = Attribute.of("shapingClientBody");

  /**
   * The request's one token tally: all shaping stages together hand at most
   * {@code shaping.maxTokenizedChars} characters of a request to the tokenizer.
   */
  static final Attribute<TokenTally> TOKENS = Attribute.of("shapingTokens");

  private ShapingAttributes() {}

  /**
   * The tier whose rules shape {@code request}, or null when shaping leaves it alone: embeddings
   * (their vectors must not change), or a request without a caller.
   */
  static Tier tierToShape(GatewayRequest request) {
    Caller caller = request.attribute(RequestAttributes.CALLER);
    if (request.route() == Route.EMBEDDINGS || caller == null) {
      return null;
    }
    return caller.tier();
  }

  /** The ladder's plan for the request; no ladder when no plan was made. */
  static ShapingPolicy.Plan plan(GatewayRequest request, Tier tier) {
    ShapingPolicy.Plan plan = request.attribute(PLAN);
    return plan != null ? plan : ShapingPolicy.Plan.none(tier);
  }

  /** The body as the client sent it. */
  static ObjectNode clientBody(GatewayRequest request) {
    ObjectNode body = request.attribute(CLIENT_BODY);
    if (body == null) {
      body = request.body();
      request.setAttribute(CLIENT_BODY, body);
    }
    return body;
  }

  /**
   * Every text the model reads in the client's body, in order: the texts of the request's
   * {@link PromptWalk} of that body, the one walk the quota estimate reads too when no stage changed
   * the body.
   */
  static List<String> clientTexts(GatewayRequest request) {
    return PromptWalk.of(request, clientBody(request)).texts();
  }

  /** The request's token tally, for the client's model. */
  static TokenTally tokens(GatewayRequest request, int maxTokenizedChars) {
    TokenTally tally = request.attribute(TOKENS);
    if (tally == null) {
      tally = TokenCounter.forModel(Json.text(clientBody(request), "model")).tally(maxTokenizedChars,
          PromptKeys.of(request));
      request.setAttribute(TOKENS, tally);
    }
    return tally;
  }

  /** A copy of the body {@code request} carries, for a stage to change and pass on. */
  static ObjectNode copyToChange(GatewayRequest request) {
    clientBody(request);
    return request.body().deepCopy();
  }

  /** Appends {@code steps} to the degraded steps of the request's {@link RequestOutcome}. */
  static void addDegraded(GatewayRequest request, Collection<String> steps) {
    RequestOutcome.of(request).degrade(List.copyOf(steps));
  }
}
