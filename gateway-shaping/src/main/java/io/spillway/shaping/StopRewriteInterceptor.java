package io.spillway.shaping;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.config.ShapingConfig;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.Route;
import io.spillway.core.pipeline.Tier;
import io.spillway.shaping.stop.StopRewrite;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Stop rewriting ({@link StopRewrite}, {@code shaping.stop}): with {@code apply: always}, or
 * {@code pressure} and the request under pressure, the risky stop sequences leave the upstream
 * request and the answer (buffered or streamed) is cut at them on its way back. The step is
 * {@code stop}. Thread-safe.
 */
final class StopRewriteInterceptor implements Interceptor {
  static final String STEP = "stop";

  private final ShapingConfig.StopConfig config;
  private final StopRewrite stopRewrite;
  private final ShapingMetrics metrics;

  StopRewriteInterceptor(ShapingConfig.StopConfig config, ShapingMetrics metrics) {
    this.config = config;
    this.stopRewrite = new StopRewrite(config);
    this.metrics = metrics;
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    Route route = request.route();
    if (tier == null || !applies(ShapingAttributes.plan(request, tier))
        || !stopRewrite.applies(route, ShapingAttributes.clientBody(request))) {
      return chain.proceed(request);
    }
    ObjectNode candidate = ShapingAttributes.copyToChange(request);
    List<String> stops = stopRewrite.rewrite(route, candidate);
    ShapingAttributes.addDegraded(request, List.of(STEP));
    metrics.step(STEP, tier);
    return chain.proceed(request.withBody(candidate)).thenApply(response -> StopRewrite.cut(response, route, stops));
  }

  private boolean applies(ShapingPolicy.Plan plan) {
    return switch (config.apply()) {
      case ALWAYS -> true;
      case PRESSURE -> plan.underPressure();
      case NEVER -> false;
    };
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "StopRewriteInterceptor";
  }
}
