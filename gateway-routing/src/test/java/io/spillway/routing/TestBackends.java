package io.spillway.routing;

import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/** Backends for tests: one that answers by blocking, and one that answers only asynchronously. */
public final class TestBackends {
  private TestBackends() {}

  /** A backend named {@code name} that answers {@link Backend#call} (and so runs on a virtual thread when called asynchronously). */
  public static Backend blocking(String name, Function<GatewayRequest, GatewayResponse> answer) {
    return new Backend() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public GatewayResponse call(GatewayRequest request) {
        return answer.apply(request);
      }
    };
  }

  /** A backend named {@code name} that answers only through {@link Backend#callAsync}, as one with a non-blocking client does. */
  public static Backend async(String name, Function<GatewayRequest, CompletionStage<GatewayResponse>> answer) {
    return new Backend() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public GatewayResponse call(GatewayRequest request) {
        return Blocking.await(callAsync(request));
      }

      @Override
      public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
        return answer.apply(request);
      }
    };
  }
}
