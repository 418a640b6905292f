package io.spillway.core.pipeline;

/**
 * One stage of the pipeline. Sees the request on the way in and the response on the way out; must
 * call {@link Chain#proceed} at most once, or answer itself without calling it. Runs on the request's
 * virtual thread, so it may block.
 */
@FunctionalInterface
public interface Interceptor {
  GatewayResponse intercept(Chain chain);

  interface Chain {
    GatewayRequest request();

    GatewayResponse proceed(GatewayRequest request);
  }
}
