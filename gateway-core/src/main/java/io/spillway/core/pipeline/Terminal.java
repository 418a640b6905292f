package io.spillway.core.pipeline;

import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * The last stage of the pipeline: the one that answers (in Spillway, the router). Runs where
 * {@link Interceptor} says stages run, by the same {@link #mayBlock} rule.
 */
@FunctionalInterface
public interface Terminal {
  CompletionStage<GatewayResponse> handle(GatewayRequest request);

  /** A terminal that answers by blocking: {@code answer} runs where blocking is allowed. */
  static Terminal blocking(Function<GatewayRequest, GatewayResponse> answer) {
    return request -> Blocking.supply(() -> answer.apply(request));
  }

  /** Whether answering may block the calling thread; see {@link Interceptor#mayBlock}. */
  default boolean mayBlock() {
    return true;
  }
}
