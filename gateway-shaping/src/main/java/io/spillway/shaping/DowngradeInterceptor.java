package io.spillway.shaping;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The ladder's {@code downgrade} step, when the plan allows it: tightens sampling parameters and the
 * output limit ({@link ParameterDowngrade}, {@code shaping.downgrade}); the steps are what changed
 * ({@code temperature}, {@code top_p}, {@code max_tokens}). Thread-safe.
 */
final class DowngradeInterceptor implements Interceptor {
  private final ParameterDowngrade downgrade;
  private final ShapingMetrics metrics;

  DowngradeInterceptor(ShapingConfig.DowngradeConfig config, ShapingMetrics metrics) {
    this.downgrade = new ParameterDowngrade(config);
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    if (tier == null || !ShapingAttributes.plan(request, tier).allows(LadderStep.DOWNGRADE)) {
      return chain.proceed(request);
    }
    ObjectNode candidate = ShapingAttributes.copyToChange(request);
    List<String> steps = new ArrayList<>(3);
    metrics.tokensSaved("max_tokens", downgrade.apply(candidate, steps));
    if (steps.isEmpty()) {
      return chain.proceed(request);
    }
    ShapingAttributes.addDegraded(request, steps);
    steps.forEach(step -> metrics.step(step, tier));
    return chain.proceed(request.withBody(candidate));
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "DowngradeInterceptor";
  }
}
