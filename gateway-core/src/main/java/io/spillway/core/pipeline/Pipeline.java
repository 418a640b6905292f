package io.spillway.core.pipeline;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * An immutable list of interceptors ending in a terminal stage. Each call walks a fresh index-based
 * chain, so one pipeline serves every request concurrently.
 *
 * <p>The chain runs on the calling thread (the front end calls it on the connection's event loop)
 * until a stage that {@link Interceptor#mayBlock may block} comes; from there on it runs on a
 * virtual thread, and that stage's way out does too. So a request whose stages do not block never
 * changes threads on its way in, and its answer continues on the thread that received it.
 */
public final class Pipeline {
  private final List<Interceptor> interceptors;
  private final Terminal terminal;

  public Pipeline(List<Interceptor> interceptors, Terminal terminal) {
    this.interceptors = List.copyOf(interceptors);
    this.terminal = terminal;
  }

  /** The answer to {@code request}, without blocking the caller. Never throws: failures fail the stage. */
  public CompletionStage<GatewayResponse> executeAsync(GatewayRequest request) {
    return new RealChain(0, request, false).proceed(request);
  }

  /** The answer to {@code request}, waiting for it: for callers that may block (tests, tools). */
  public GatewayResponse execute(GatewayRequest request) {
    return Blocking.await(executeAsync(request));
  }

  private final class RealChain implements Interceptor.Chain {
    private final int index;
    private final GatewayRequest request;
    /** Whether the stage this chain was handed to may block: its way out then runs on a virtual thread. */
    private final boolean callerMayBlock;
    private boolean proceeded;

    RealChain(int index, GatewayRequest request, boolean callerMayBlock) {
      this.index = index;
      this.request = request;
      this.callerMayBlock = callerMayBlock;
    }

    @Override
    public GatewayRequest request() {
      return request;
    }

    @Override
    public CompletionStage<GatewayResponse> proceed(GatewayRequest next) {
      if (index > 0) {
        if (proceeded) {
          throw new IllegalStateException(interceptors.get(index - 1) + " must call proceed() at most once");
        }
        proceeded = true;
      }
      CompletionStage<GatewayResponse> answer = next(next);
      return callerMayBlock ? Blocking.continuedOffLoop(answer) : answer;
    }

    private CompletionStage<GatewayResponse> next(GatewayRequest next) {
      boolean last = index == interceptors.size();
      boolean mayBlock = last ? terminal.mayBlock() : interceptors.get(index).mayBlock();
      if (mayBlock && !Blocking.allowedHere()) {
        return Blocking.supply(() -> run(next, true)).thenCompose(stage -> stage);
      }
      return run(next, mayBlock);
    }

    private CompletionStage<GatewayResponse> run(GatewayRequest next, boolean mayBlock) {
      CompletionStage<GatewayResponse> answer;
      try {
        answer = index == interceptors.size()
            ? terminal.handle(next)
            : interceptors.get(index).intercept(new RealChain(index + 1, next, mayBlock));
      } catch (RuntimeException | Error e) {
        return CompletableFuture.failedFuture(e);
      }
      if (answer == null) {
        Object stage = index == interceptors.size() ? terminal : interceptors.get(index);
        return CompletableFuture.failedFuture(new IllegalStateException(stage + " returned no response"));
      }
      return answer;
    }
  }
}
