package io.spillway.shaping;

import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Tier;
import java.util.concurrent.CompletionStage;

/**
 * Asks the {@link ShapingPolicy} once per request how far down the degradation ladder it goes, and
 * leaves the answer on the request ({@link ShapingAttributes#PLAN}) for the step stages after it:
 * every step sees the same pressure, however it changes while they run. Thread-safe.
 */
final class LadderInterceptor implements Interceptor {
  private final ShapingPolicy policy;

  LadderInterceptor(ShapingPolicy policy) {
    this.policy = policy;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    if (tier != null) {
      request.setAttribute(ShapingAttributes.PLAN, policy.plan(tier));
    }
    return chain.proceed(request);
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "LadderInterceptor";
  }
}
