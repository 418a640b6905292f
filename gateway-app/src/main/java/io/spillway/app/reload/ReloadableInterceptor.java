package io.spillway.app.reload;

import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * A pipeline stage rebuilt from each reloaded config. Requests already in the stage finish with the
 * instance they entered; the next request sees the new one.
 */
public final class ReloadableInterceptor implements Interceptor, Reloadable {
  private final Function<GatewayConfig, Interceptor> factory;
  private final AtomicReference<Interceptor> current;

  public ReloadableInterceptor(GatewayConfig initial, Function<GatewayConfig, Interceptor> factory) {
    this.factory = factory;
    this.current = new AtomicReference<>(factory.apply(initial));
  }

  @Override
  public CompletionStage<GatewayResponse> intercept(Chain chain) {
    return current.get().intercept(chain);
  }

  @Override
  public boolean mayBlock() {
    return current.get().mayBlock();
  }

  @Override
  public void reload(GatewayConfig next) {
    current.set(factory.apply(next));
  }

  @Override
  public String toString() {
    return current.get().toString();
  }
}
