package io.spillway.app.architecture.planted;

import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import java.util.concurrent.CompletionStage;

/** Planted for ArchitectureRulesTest: a stage whose name does not say it is one. */
public final class UnsuffixedStage implements Interceptor {
  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    return chain.proceed(chain.request());
  }
}
