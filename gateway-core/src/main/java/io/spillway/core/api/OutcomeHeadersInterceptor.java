package io.spillway.core.api;

import io.spillway.core.http.Headers;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import io.spillway.core.pipeline.RequestOutcome;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * The stage that tells the client what became of its request: on the way out it writes the
 * {@code x-spillway-*} headers from the {@link RequestOutcome} the router, shaping and the local
 * backend wrote — {@code x-spillway-backend} (which backend served), {@code x-spillway-route} (which cloud route), {@code x-spillway-fallback}
 * (why the cloud was tried instead of local) and {@code x-spillway-degraded} (what shaping changed);
 * and {@code x-spillway-cache} when the cache status is already known here (the model list says it
 * is never cached). It sits right inside the response cache, so a stored or shared answer carries
 * them as they were, and the cache adds its own status on the way out. Thread-safe.
 */
public final class OutcomeHeadersInterceptor implements Interceptor {
  public static final String BACKEND = "x-spillway-backend";
  public static final String ROUTE = "x-spillway-route";
  public static final String FALLBACK = "x-spillway-fallback";
  public static final String DEGRADED = "x-spillway-degraded";
  public static final String CACHE = "x-spillway-cache";

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    GatewayRequest request = chain.request();
    return chain.proceed(request).thenApply(response -> write(RequestOutcome.of(request), response));
  }

  /** {@code response} with the headers {@code outcome} calls for. */
  public static GatewayResponse write(RequestOutcome outcome, GatewayResponse response) {
    BackendKind backend = outcome.backend();
    String route = outcome.route();
    String fallback = outcome.fallback();
    List<String> degraded = outcome.degraded();
    RequestOutcome.CacheStatus cache = outcome.cache();
    if (backend == null && route == null && fallback == null && degraded.isEmpty() && cache == null) {
      return response;
    }
    Headers.Builder headers = response.headers().toBuilder();
    if (backend != null) {
      headers.set(BACKEND, backend.tag());
    }
    if (route != null) {
      headers.set(ROUTE, route);
    }
    if (fallback != null) {
      headers.set(FALLBACK, fallback);
    }
    if (!degraded.isEmpty()) {
      headers.set(DEGRADED, String.join(",", degraded));
    }
    if (cache != null) {
      headers.set(CACHE, cache.tag());
    }
    return response.withHeaders(headers.build());
  }

  @Override
  public boolean mayBlock() {
    return false;
  }

  @Override
  public String toString() {
    return "OutcomeHeadersInterceptor";
  }
}
