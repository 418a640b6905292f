package io.spillway.shaping;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Tier;
import io.spillway.core.tokens.PromptKeys;
import io.spillway.shaping.signal.SignalScorer;
import java.util.concurrent.CompletionStage;

/**
 * Signal scoring, with or without pressure ({@code shaping.signal}): a low-signal request gets
 * {@link RequestAttributes#LOW_SIGNAL} (the admission queue serves it last), is counted by reason,
 * and its answer gets {@code x-spillway-signal: low}. Thread-safe.
 */
final class SignalInterceptor implements Interceptor {
  static final String HEADER = "x-spillway-signal";

  private final ShapingConfig.SignalConfig config;
  private final SignalScorer scorer;
  private final ShapingMetrics metrics;

  SignalInterceptor(ShapingConfig.SignalConfig config, ShapingMetrics metrics) {
    this.config = config;
    this.scorer = new SignalScorer(config);
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    if (tier == null || !config.enabled()) {
      return chain.proceed(request);
    }
    SignalScorer.Reason reason = score(request);
    if (reason == null) {
      return chain.proceed(request);
    }
    request.setAttribute(RequestAttributes.LOW_SIGNAL, true);
    metrics.lowSignal(reason.tag(), tier);
    return chain.proceed(request).thenApply(response -> response.withHeader(HEADER, "low"));
  }

  private SignalScorer.Reason score(GatewayRequest request) {
    ObjectNode body = ShapingAttributes.clientBody(request);
    JsonNode temperature = body.get("temperature");
    return scorer.score(ShapingAttributes.clientTexts(request), PromptKeys.of(request)::key,
        temperature != null && temperature.isNumber() ? temperature.doubleValue() : null, maxTokens(body));
  }

  private static long maxTokens(ObjectNode body) {
    long max = 0;
    for (String field : ParameterDowngrade.MAX_TOKEN_FIELDS) {
      JsonNode value = body.get(field);
      if (value != null && value.canConvertToLong()) {
        max = Math.max(max, value.longValue());
      }
    }
    return max;
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "SignalInterceptor";
  }
}
