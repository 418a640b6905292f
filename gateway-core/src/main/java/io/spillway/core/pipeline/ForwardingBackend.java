package io.spillway.core.pipeline;

import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A {@link Backend} that wraps another (to meter or trace its calls): kind, readiness and warm-up
 * are the wrapped backend's; subclasses say in {@link #callAsync} what a call adds, once. So a
 * wrapper adds no thread hand-off: it answers wherever the wrapped backend's answer completes.
 */
public abstract class ForwardingBackend implements Backend {
  protected final Backend delegate;

  protected ForwardingBackend(Backend delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  @Override
  public abstract CompletionStage<GatewayResponse> callAsync(GatewayRequest request);

  /**
   * The wrapped backend's {@link Backend#callAsync}, with a failure it throws instead of
   * returning (against its contract) turned into a failed stage, so a wrapper sees every failure
   * in one place.
   */
  protected final CompletionStage<GatewayResponse> delegateCall(GatewayRequest request) {
    try {
      return delegate.callAsync(request);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public BackendKind kind() {
    return delegate.kind();
  }

  @Override
  public boolean ready() {
    return delegate.ready();
  }

  @Override
  public void warmUp() {
    delegate.warmUp();
  }
}
