package io.spillway.routing.internal;

import io.spillway.core.pipeline.Blocking;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A stream's first event (null when it ended without one), as a stage. A {@link EventStream#nonBlocking()
 * non-blocking} stream is polled and then waited for with {@link EventStream#onReady}, so the stage
 * completes on the thread its first event arrived on and no thread waits; any other stream is read
 * where blocking is allowed ({@link Blocking#supply}). A failure of the stream fails the stage.
 */
public final class FirstEvent implements Runnable {
  private final EventStream stream;
  private final CompletableFuture<SseEvent> result = new CompletableFuture<>();

  private FirstEvent(EventStream stream) {
    this.stream = stream;
  }

  public static CompletionStage<SseEvent> of(EventStream stream) {
    if (!stream.nonBlocking()) {
      return Blocking.supply(stream::next);
    }
    FirstEvent first = new FirstEvent(stream);
    first.run();
    return first.result;
  }

  /** Polls; when nothing is there yet, asks to be run again once something is. */
  @Override
  public void run() {
    SseEvent event;
    try {
      event = stream.poll();
    } catch (RuntimeException | Error e) {
      result.completeExceptionally(e);
      return;
    }
    if (event == SseEvent.PENDING) {
      stream.onReady(this);
    } else {
      result.complete(event);
    }
  }
}
