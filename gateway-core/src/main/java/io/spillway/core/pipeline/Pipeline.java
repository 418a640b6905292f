package io.spillway.core.pipeline;

import java.util.List;

/**
 * An immutable list of interceptors ending in a terminal stage. Each call walks a fresh index-based
 * chain, so one pipeline serves every request concurrently.
 */
public final class Pipeline {
  private final List<Interceptor> interceptors;
  private final Terminal terminal;

  public Pipeline(List<Interceptor> interceptors, Terminal terminal) {
    this.interceptors = List.copyOf(interceptors);
    this.terminal = terminal;
  }

  public GatewayResponse execute(GatewayRequest request) {
    return new RealChain(0, request).proceed(request);
  }

  private final class RealChain implements Interceptor.Chain {
    private final int index;
    private final GatewayRequest request;
    private boolean proceeded;

    RealChain(int index, GatewayRequest request) {
      this.index = index;
      this.request = request;
    }

    @Override
    public GatewayRequest request() {
      return request;
    }

    @Override
    public GatewayResponse proceed(GatewayRequest next) {
      if (index > 0) {
        if (proceeded) {
          throw new IllegalStateException(interceptors.get(index - 1) + " must call proceed() at most once");
        }
        proceeded = true;
      }
      if (index == interceptors.size()) {
        return terminal.handle(next);
      }
      Interceptor interceptor = interceptors.get(index);
      GatewayResponse response = interceptor.intercept(new RealChain(index + 1, next));
      if (response == null) {
        throw new IllegalStateException(interceptor + " returned no response");
      }
      return response;
    }
  }
}
