package io.spillway.shaping;

import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestAttributes;
import io.spillway.core.pipeline.Tier;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells the client what shaping changed: the answer gets {@code x-spillway-degraded} listing the
 * steps in {@link RequestAttributes#DEGRADED} as they stand when the answer comes back, so it
 * includes the steps of stages further in (the local backend's {@code context_fit}) and leaves out
 * the ones they took back ({@code local} when another backend served). Thread-safe.
 */
final class DegradedHeaderInterceptor implements Interceptor {
  static final String HEADER = "x-spillway-degraded";
  private static final Logger log = LoggerFactory.getLogger(DegradedHeaderInterceptor.class);

  @Override
  public GatewayResponse intercept(Chain chain) {
    GatewayRequest request = chain.request();
    Tier tier = ShapingAttributes.tierToShape(request);
    GatewayResponse response = chain.proceed(request);
    if (tier == null) {
      return response;
    }
    List<String> steps = request.attribute(RequestAttributes.DEGRADED, List.of());
    if (steps.isEmpty()) {
      return response;
    }
    if (log.isDebugEnabled()) {
      log.debug("request {} shaped: steps={} pressure={}", request.id(), steps,
          ShapingAttributes.plan(request, tier).pressure());
    }
    return response.withHeader(HEADER, String.join(",", steps));
  }

  @Override
  public String toString() {
    return "DegradedHeaderInterceptor";
  }
}
