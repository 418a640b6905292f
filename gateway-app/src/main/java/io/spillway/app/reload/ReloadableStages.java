package io.spillway.app.reload;

import io.spillway.config.GatewayConfig;
import io.spillway.config.Reloadable;
import io.spillway.core.pipeline.GatewayResponse;
import io.spillway.core.pipeline.Interceptor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

/**
 * A run of pipeline stages rebuilt together from each reloaded config (the factory must always give
 * the same number of stages). Each of {@link #stages()} delegates to its place in the current run; a
 * request already past a stage keeps what that stage did, the next stage it enters is the current one.
 */
public final class ReloadableStages implements Reloadable {
  private final String name;
  private final Function<GatewayConfig, List<Interceptor>> factory;
  private final AtomicReference<List<Interceptor>> current;
  private final List<Interceptor> stages;

  public ReloadableStages(String name, GatewayConfig initial, Function<GatewayConfig, List<Interceptor>> factory) {
    this.name = name;
    this.factory = factory;
    this.current = new AtomicReference<>(List.copyOf(factory.apply(initial)));
    List<Interceptor> slots = new ArrayList<>();
    for (int i = 0; i < current.get().size(); i++) {
      slots.add(new Slot(i));
    }
    this.stages = List.copyOf(slots);
  }

  /** The stages to put in the pipeline, in order. */
  public List<Interceptor> stages() {
    return stages;
  }

  @Override
  public void reload(GatewayConfig next) {
    List<Interceptor> rebuilt = List.copyOf(factory.apply(next));
    if (rebuilt.size() != stages.size()) {
      throw new IllegalStateException(name + " gave " + rebuilt.size() + " stages instead of " + stages.size());
    }
    current.set(rebuilt);
  }

  @Override
  public String toString() {
    return name;
  }

  private final class Slot implements Interceptor {
    private final int index;

    Slot(int index) {
      this.index = index;
    }

    @Override
    public CompletionStage<GatewayResponse> intercept(Chain chain) {
      return current.get().get(index).intercept(chain);
    }

    @Override
    public boolean mayBlock() {
      return current.get().get(index).mayBlock();
    }

    @Override
    public String toString() {
      return current.get().get(index).toString();
    }
  }
}
