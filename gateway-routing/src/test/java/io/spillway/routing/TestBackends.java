package io.spillway.routing;

import io.spillway.core.pipeline.Backend;
import io.spillway.core.pipeline.BackendKind;
import io.spillway.core.pipeline.Blocking;
import io.spillway.core.pipeline.GatewayRequest;
import io.spillway.core.pipeline.GatewayResponse;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/** Backends for tests: one that answers by blocking, and one that answers only asynchronously. */
public final class TestBackends {
  private TestBackends() {}

  /** A backend of {@code kind} whose answer blocks, so it runs where blocking is allowed ({@link Blocking#supply}). */
  public static Backend blocking(BackendKind kind, Function<GatewayRequest, GatewayResponse> answer) {
    return new Backend() {
      @Override
      public BackendKind kind() {
        return kind;
      }

      @Override
      public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
        return Blocking.supply(() -> answer.apply(request));
      }
    };
  }

  /** A backend of {@code kind} that answers only through {@link Backend#callAsync}, as one with a non-blocking client does. */
  public static Backend async(BackendKind kind, Function<GatewayRequest, CompletionStage<GatewayResponse>> answer) {
    return new Backend() {
      @Override
      public BackendKind kind() {
        return kind;
      }

      @Override
      public CompletionStage<GatewayResponse> callAsync(GatewayRequest request) {
        return answer.apply(request);
      }
    };
  }
}
