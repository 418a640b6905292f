package io.spillway.shaping;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.tokens.TokenCounter;
import io.spillway.core.tokens.TokenTally;
import io.spillway.trim.ContextTrimmer;
import io.spillway.trim.TrimSettings;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;

/**
 * The ladder's {@code trim} step: trims oversized code context ({@code shaping.trim}) of a request
 * above its tier's {@code trimAboveTokens}, or, when the plan allows trimming, above the lower
 * {@code pressureTrimAboveTokens}. Each text is trimmed with the tier's settings and kept only when
 * that gives fewer tokens; the step is {@code trimmed}. Thread-safe.
 */
final class TrimInterceptor implements Interceptor {
  static final String STEP = "trimmed";

  private final Set<String> roles;
  private final int maxTokenizedChars;
  private final ShapingMetrics metrics;
  private final Map<Tier, TierTrim> trims = new EnumMap<>(Tier.class);

  private record TierTrim(ContextTrimmer trimmer, int aboveTokens, int underPressureAboveTokens) {}

  TrimInterceptor(ShapingConfig config, ShapingMetrics metrics) {
    this.roles = Set.copyOf(config.trim().roles());
    this.maxTokenizedChars = config.maxTokenizedChars();
    this.metrics = metrics;
    ShapingConfig.TrimConfig trim = config.trim();
    for (Tier tier : Tier.values()) {
      ShapingConfig.TierConfig t = config.tier(tier);
      TrimSettings settings = new TrimSettings(
          t.keepLastLines() != null ? t.keepLastLines() : trim.keepLastLines(),
          t.keepDefinitions() != null ? t.keepDefinitions() : trim.keepDefinitions(),
          trim.keepTraceDefinitions(), trim.maxDefinitionLines(), trim.marker());
      trims.put(tier, new TierTrim(new ContextTrimmer(settings), t.trimAboveTokens(), t.pressureTrimAboveTokens()));
    }
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    if (tier == null) {
      return chain.proceed(request);
    }
    TierTrim trim = trims.get(tier);
    boolean underPressure = ShapingAttributes.plan(request, tier).allows(LadderStep.TRIM);
    if (!underPressure && trim.aboveTokens() <= 0) {
      return chain.proceed(request);
    }
    int limit = trim.aboveTokens() > 0 ? trim.aboveTokens() : Integer.MAX_VALUE;
    if (underPressure) {
      limit = Math.min(limit, trim.underPressureAboveTokens());
    }
    TokenTally tokens = ShapingAttributes.tokens(request, maxTokenizedChars);
    if (!tokens.exceeds(ShapingAttributes.clientTexts(request), limit)) {
      return chain.proceed(request);
    }
    ObjectNode candidate = ShapingAttributes.copyToChange(request);
    TokenCounter tokenizer = TokenCounter.forModel(request.model());
    boolean trimmed = RequestTexts.rewrite(request.route(), candidate, roles,
        (text, kind) -> trimText(trim.trimmer(), tokenizer, tokens, text, kind));
    if (!trimmed) {
      return chain.proceed(request);
    }
    ShapingAttributes.addDegraded(request, List.of(STEP));
    metrics.step(STEP, tier);
    return chain.proceed(request.withBody(candidate));
  }

  /** One text trimmed, kept only if that gives fewer tokens. */
  private String trimText(
      ContextTrimmer trimmer, TokenCounter tokenizer, TokenTally tokens, String text, RequestTexts.Kind kind) {
    String trimmed = kind == RequestTexts.Kind.CODE ? trimmer.trimCode(text, null) : trimmer.trimMessage(text);
    return TokenGuard.fewerTokens(text, trimmed, tokens, (original, after) ->
        metrics.trimmed(tokenizer.tally(maxTokenizedChars), original, after));
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "TrimInterceptor";
  }
}
