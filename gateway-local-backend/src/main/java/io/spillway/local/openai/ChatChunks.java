package io.spillway.local.openai;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import io.spillway.local.UpstreamObjects;
import java.io.IOException;

/**
 * A {@code chat.completion.chunk} stream read one chunk at a time, as JSON objects; {@code [DONE]}
 * finishes it. Polled as its event stream is: it blocks only where that stream does. Not
 * thread-safe, except {@link #close}.
 */
public final class ChatChunks implements UpstreamObjects {
  private final String backend;
  private final EventStream events;
  private boolean finished;

  public ChatChunks(String backend, EventStream events) {
    this.backend = backend;
    this.events = events;
  }

  @Override
  public JsonNode poll() {
    if (finished) {
      return null;
    }
    SseEvent event = events.poll();
    if (event == SseEvent.PENDING) {
      return PENDING;
    }
    if (event == null) {
      return null;
    }
    if (event.isDone()) {
      finished = true;
      return null;
    }
    try {
      JsonNode json = Json.parse(event.data());
      if (json != null && json.isObject()) {
        return json;
      }
    } catch (IOException e) {
      // reported below
    }
    throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
        "The " + backend + " backend sent a stream chunk that is not a JSON object", null);
  }

  @Override
  public void onReady(Runnable action) {
    events.onReady(action);
  }

  @Override
  public boolean nonBlocking() {
    return events.nonBlocking();
  }

  @Override
  public boolean finished() {
    return finished;
  }

  @Override
  public void close() {
    events.close();
  }
}
