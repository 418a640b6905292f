package io.spillway.shaping;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Tier;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The ladder's {@code model} step, when the plan allows it: a smaller model from the scenario table
 * ({@link ModelScenarios}, {@code shaping.models}, {@code shaping.scenarios}), judged on the request
 * as the client sent it. The requested model is kept in {@link RequestAttributes#MODEL_REWRITTEN_FROM};
 * the step is {@code model}. Thread-safe.
 */
final class ModelStepInterceptor implements Interceptor {
  static final String STEP = "model";

  private final ModelScenarios scenarios;
  private final int shortPromptTokens;
  private final int maxTokenizedChars;
  private final ShapingMetrics metrics;

  ModelStepInterceptor(ShapingConfig config, ShapingMetrics metrics) {
    this.scenarios = new ModelScenarios(config.models(), config.scenarios());
    this.shortPromptTokens = config.scenarios().shortPromptTokens();
    this.maxTokenizedChars = config.maxTokenizedChars();
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    if (tier == null || !ShapingAttributes.plan(request, tier).allows(LadderStep.MODEL)) {
      return chain.proceed(request);
    }
    String model = request.model();
    String smaller = scenarios.smallerModel(model, ShapingAttributes.clientBody(request),
        () -> ShapingAttributes.tokens(request, maxTokenizedChars)
            .exceeds(ShapingAttributes.clientTexts(request), shortPromptTokens));
    if (smaller == null) {
      return chain.proceed(request);
    }
    ObjectNode candidate = ShapingAttributes.copyToChange(request);
    candidate.put("model", smaller);
    request.setAttribute(RequestAttributes.MODEL_REWRITTEN_FROM, model);
    ShapingAttributes.addDegraded(request, List.of(STEP));
    metrics.step(STEP, tier);
    return chain.proceed(request.withBody(candidate));
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "ModelStepInterceptor";
  }
}
