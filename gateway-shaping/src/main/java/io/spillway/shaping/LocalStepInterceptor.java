package io.spillway.shaping;

import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Tier;
import java.util.concurrent.CompletionStage;

/**
 * The ladder's last step, {@code local}, when the plan allows it: sets
 * {@link RequestAttributes#PREFER_LOCAL}, a preference the router honours unless the request becomes
 * the breaker's half-open probe or local cannot serve it. Only the router knows whether it did, so
 * the router lists the step in the {@link RequestOutcome}'s degraded steps
 * ({@link RequestOutcome#localByPreference(boolean)}); this stage asks and counts. Thread-safe.
 */
final class LocalStepInterceptor implements Interceptor {
  static final String STEP = RequestOutcome.LOCAL_STEP;

  private final ShapingMetrics metrics;

  LocalStepInterceptor(ShapingMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    if (tier == null || !ShapingAttributes.plan(request, tier).allows(LadderStep.LOCAL)) {
      return chain.proceed(request);
    }
    request.setAttribute(RequestAttributes.PREFER_LOCAL, true);
    metrics.step(STEP, tier);
    return chain.proceed(request);
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "LocalStepInterceptor";
  }
}
