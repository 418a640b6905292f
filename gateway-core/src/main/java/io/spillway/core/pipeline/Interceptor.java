package io.spillway.core.pipeline;

import io.spillway.core.error.GatewayException;
import java.util.concurrent.CompletionStage;

/**
 * One stage of the pipeline. Sees the request on the way in and the response on the way out; must
 * call {@link Chain#proceed} at most once, or answer itself without calling it.
 *
 * <p>A stage answers with a stage of its own: the response arrives when the rest of the chain has
 * one (the upstream's head, on the connection's event loop), and the way out is written as
 * {@code chain.proceed(request).thenApply(...)}. A stage may also throw a
 * {@link GatewayException} on the way in; the pipeline turns it into a failed answer.
 *
 * <p>Where it runs: a stage that does not {@link #mayBlock} runs on whatever thread the request is
 * on, usually its connection's event loop, and must not block there. One that may block is moved
 * to a virtual thread first (unless the request is already on one), and its way out runs on a
 * virtual thread too; see {@link Blocking}.
 */
@FunctionalInterface
public interface Interceptor {
  CompletionStage<GatewayResponse> intercept(Chain chain);

  /**
   * Whether this stage may block (a Redis call, a wait): it then runs on a virtual thread. The
   * default is the safe answer; a stage that only computes says false.
   */
  default boolean mayBlock() {
    return true;
  }

  interface Chain {
    GatewayRequest request();

    /** The rest of the chain's answer for {@code request}; never throws, a failure fails the stage. */
    CompletionStage<GatewayResponse> proceed(GatewayRequest request);

    /**
     * {@link #proceed}, with a {@link GatewayException} from a later stage turned into its error
     * response here (exactly as the front end would render it), for a stage that puts headers on
     * every answer, errors included.
     */
    default CompletionStage<GatewayResponse> proceedAnswering(GatewayRequest request) {
      return proceed(request).exceptionally(failure -> {
        if (Blocking.cause(failure) instanceof GatewayException e) {
          return ErrorMapper.toResponse(e);
        }
        throw Blocking.rethrow(Blocking.cause(failure));
      });
    }
  }
}
