package io.spillway.core.pipeline;

import java.util.concurrent.CompletionStage;
/**
 * A stage that only concerns authenticated callers (quota accounting, token reporting, rate
 * limits): a request without {@link RequestAttributes#CALLER} passes through untouched.
 */
public abstract class CallerInterceptor implements Interceptor {
  @Override
  public final CompletionStage<GatewayResponse> intercept(Chain chain) {
    Caller caller = chain.request().attribute(RequestAttributes.CALLER);
    return caller == null ? chain.proceed(chain.request()) : intercept(chain, caller);
  }

  /** Handles a request of {@code caller}. */
  protected abstract CompletionStage<GatewayResponse> intercept(Chain chain, Caller caller);
}
