package io.spillway.core.pipeline;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Where work that may block runs. The pipeline runs a request on its connection's event loop for as
 * long as nothing blocks; work that may block (Redis, a wait in the admission queue, a backend
 * without a non-blocking client) moves to a virtual thread, and stays there for the rest of the
 * request's way in. A virtual thread may block, so work that is already on one runs where it is:
 * the hand-off is paid only by requests that need it.
 */
public final class Blocking {
  private static final ThreadFactory THREADS = Thread.ofVirtual().name("spillway-blocking").factory();
  private static final LongAdder HAND_OFFS = new LongAdder();
  private static final Executor VIRTUAL_THREADS = task -> {
    HAND_OFFS.increment();
    THREADS.newThread(task).start();
  };

  private Blocking() {}

  /** Whether the calling thread may block: a virtual thread may, an event loop must not. */
  public static boolean allowedHere() {
    return Thread.currentThread().isVirtual();
  }

  /**
   * How many times work moved from a thread that must not block to a virtual thread since start:
   * requests whose stages did not block add nothing (the metric {@code spillway_blocking_handoffs}).
   */
  public static long handOffs() {
    return HAND_OFFS.sum();
  }

  /** Runs each task on a new virtual thread. */
  public static Executor virtualThreads() {
    return VIRTUAL_THREADS;
  }

  /**
   * {@code work}'s result: computed right here when this thread may block, else on a new virtual
   * thread. A failure completes the stage exceptionally (never thrown from here).
   */
  public static <T> CompletableFuture<T> supply(Supplier<T> work) {
    if (allowedHere()) {
      try {
        return CompletableFuture.completedFuture(work.get());
      } catch (RuntimeException | Error e) {
        return CompletableFuture.failedFuture(e);
      }
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    VIRTUAL_THREADS.execute(() -> {
      try {
        result.complete(work.get());
      } catch (RuntimeException | Error e) {
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  /**
   * {@code stage}, with what depends on it run on a virtual thread: for the way out of work that may
   * block, when the answer would otherwise arrive on an event loop. A stage already done is
   * returned as it is (its dependents run on the caller, which may block already).
   */
  public static <T> CompletionStage<T> continuedOffLoop(CompletionStage<T> stage) {
    if (stage.toCompletableFuture().isDone()) {
      return stage;
    }
    return stage.whenCompleteAsync((value, failure) -> {}, VIRTUAL_THREADS);
  }

  /**
   * Waits for {@code stage} (on a thread that may block) and returns its value, or throws its
   * failure as it was raised: a {@link io.spillway.core.error.GatewayException} stays one.
   */
  public static <T> T await(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().join();
    } catch (CompletionException e) {
      throw rethrow(cause(e));
    }
  }

  /** The failure itself, without the {@link CompletionException} wrappers a stage adds. */
  public static Throwable cause(Throwable failure) {
    Throwable cause = failure;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /** {@code failure} as something to throw: itself when unchecked, else wrapped. */
  public static RuntimeException rethrow(Throwable failure) {
    if (failure instanceof RuntimeException e) {
      throw e;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    throw new CompletionException(failure);
  }
}
