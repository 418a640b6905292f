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

    /**
     * {@link #proceed}, with a {@link io.spillway.core.error.GatewayException} from a later stage
     * turned into its error response here (exactly as the front end would render it), for a stage
     * that puts headers on every answer, errors included.
     */
    default GatewayResponse proceedAnswering(GatewayRequest request) {
      try {
        return proceed(request);
      } catch (io.spillway.core.error.GatewayException e) {
        return GatewayResponse.error(e);
      }
    }
  }
}
