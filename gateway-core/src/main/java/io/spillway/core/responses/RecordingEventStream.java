package io.spillway.core.responses;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.json.Json;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A Responses stream that hands its final {@code response} object ({@code response.completed}, or
 * {@code response.incomplete}) to the recorder before passing that event on, so a client that
 * starts its next turn as soon as it has read the stream finds this one stored, on any replica.
 * When storing may block and the stream is polled from an event loop, it stores on a virtual thread
 * and answers {@link SseEvent#PENDING} until that is done.
 */
final class RecordingEventStream extends ForwardingEventStream {
  private final Consumer<JsonNode> record;
  private final boolean recordBlocks;
  private volatile CompletableFuture<Void> recording;
  private SseEvent held;
  private boolean recorded;

  RecordingEventStream(EventStream delegate, Consumer<JsonNode> record, boolean recordBlocks) {
    super(delegate);
    this.record = record;
    this.recordBlocks = recordBlocks;
  }

  @Override
  public SseEvent poll() {
    CompletableFuture<Void> pending = recording;
    if (pending != null) {
      if (!pending.isDone()) {
        return SseEvent.PENDING;
      }
      recording = null;
      SseEvent event = held;
      held = null;
      return event;
    }
    SseEvent event = delegate.poll();
    if (event == null || event == SseEvent.PENDING || recorded || !finalEvent(event)) {
      return event;
    }
    JsonNode response = response(event);
    if (response == null) {
      return event;
    }
    recorded = true;
    if (!recordBlocks || !delegate.nonBlocking()) {
      record.accept(response);
      return event;
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    held = event;
    recording = done;
    Thread.ofVirtual().name("spillway-response-store").start(() -> {
      try {
        record.accept(response);
      } finally {
        done.complete(null);
      }
    });
    return poll();
  }

  @Override
  public void onReady(Runnable action) {
    CompletableFuture<Void> pending = recording;
    if (pending != null) {
      pending.whenComplete((done, failure) -> action.run());
    } else {
      delegate.onReady(action);
    }
  }

  private static boolean finalEvent(SseEvent event) {
    if (event.named()) {
      return event.nameIs("response.completed") || event.nameIs("response.incomplete");
    }
    return event.mayContain("response.completed") || event.mayContain("response.incomplete");
  }

  private static JsonNode response(SseEvent event) {
    try {
      JsonNode data = Json.parse(event.data());
      String type = Json.text(data, "type");
      if (!"response.completed".equals(type) && !"response.incomplete".equals(type)) {
        return null;
      }
      JsonNode response = data.get("response");
      return response != null && response.isObject() ? response : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
