package io.spillway.routing.internal;

import io.spillway.core.pipeline.Blocking;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;

/**
 * A stream's first event (null when it ended without one), as a stage. A {@link EventStream#nonBlocking()
 * non-blocking} stream is polled and then waited for with {@link EventStream#onReady}, so the stage
 * completes on the thread its first event arrived on and no thread waits; any other stream is read
 * where blocking is allowed ({@link Blocking#supply}). A failure of the stream fails the stage.
 */
public final class FirstEvent implements Runnable {
  /** The most preamble events read ahead before the first that decides. */
  private static final int MAX_PREAMBLE = 8;

  private final EventStream stream;
  private final Predicate<SseEvent> preamble;
  private final List<SseEvent> read = new ArrayList<>();
  private final CompletableFuture<List<SseEvent>> result = new CompletableFuture<>();

  private FirstEvent(EventStream stream, Predicate<SseEvent> preamble) {
    this.stream = stream;
    this.preamble = preamble;
  }

  public static CompletionStage<SseEvent> of(EventStream stream) {
    return of(stream, event -> false).thenApply(events -> events.get(events.size() - 1));
  }

  /**
   * The events up to the first that is not {@code preamble} (Anthropic's {@code message_start} and
   * {@code ping} tell nothing of how the answer goes): the preamble events read, then that first
   * one, or null when the stream ended before it. At most {@value #MAX_PREAMBLE} preamble events
   * are read ahead; after them the next event decides whatever it is.
   */
  public static CompletionStage<List<SseEvent>> of(EventStream stream, Predicate<SseEvent> preamble) {
    FirstEvent first = new FirstEvent(stream, preamble);
    if (!stream.nonBlocking()) {
      return Blocking.supply(() -> {
        while (true) {
          SseEvent event = stream.next();
          if (first.decided(event)) {
            return first.read;
          }
        }
      });
    }
    first.run();
    return first.result;
  }

  /** Keeps {@code event}; whether it decides (it is no preamble, or the read-ahead is full). */
  private boolean decided(SseEvent event) {
    read.add(event);
    return event == null || read.size() > MAX_PREAMBLE || !preamble.test(event);
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
    while (event != SseEvent.PENDING && !decided(event)) {
      try {
        event = stream.poll();
      } catch (RuntimeException | Error e) {
        result.completeExceptionally(e);
        return;
      }
    }
    if (event == SseEvent.PENDING) {
      stream.onReady(this);
    } else {
      result.complete(read);
    }
  }
}
