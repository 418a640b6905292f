package io.spillway.shaping;

import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.RequestOutcome;
import io.spillway.core.pipeline.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The ladder's last step, {@code local}, when the plan allows it: sets
 * {@link RequestAttributes#PREFER_LOCAL}, a preference the router honours unless the request becomes
 * the breaker's half-open probe or local cannot serve it. So the step is taken back from
 * the {@link RequestOutcome}'s degraded steps when the answer comes back and the router says (in the
 * same outcome) that another backend served it. Thread-safe.
 */
final class LocalStepInterceptor implements Interceptor {
  static final String STEP = "local";
  /** The backend the router names in the {@link RequestOutcome} when the local backend served. */
  private static final String LOCAL_BACKEND = "local";

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
    ShapingAttributes.addDegraded(request, List.of(STEP));
    metrics.step(STEP, tier);
    return chain.proceed(request).whenComplete((response, failure) -> {
      RequestOutcome outcome = RequestOutcome.of(request);
      String backend = outcome.backend();
      if (backend != null && !backend.equals(LOCAL_BACKEND)) {
        outcome.undo(STEP);
      }
    });
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
