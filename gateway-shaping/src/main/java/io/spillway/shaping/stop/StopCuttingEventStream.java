package io.spillway.shaping.stop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.Route;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A chat or completions stream cut at the first match of the stop sequences the gateway took over
 * from the upstream. Per choice, text that may begin a stop sequence is held back across chunk
 * boundaries; at a match the text before it goes out with {@code finish_reason: "stop"} and the rest
 * of that choice is dropped. Chunks without choices (usage) and {@code [DONE]} pass through. The
 * upstream is still read to its end, so its usage chunk arrives and the call ends normally.
 *
 * <p>Polled from one thread at a time, like every {@link EventStream}; what it has read ahead (a
 * held-back chunk before {@code [DONE]}) waits in it across {@link SseEvent#PENDING}.
 */
public final class StopCuttingEventStream extends ForwardingEventStream {
  private final List<String> stops;
  private final boolean chat;
  private final Map<Integer, StopMatcher> choices = new TreeMap<>();
  private final Deque<SseEvent> ready = new ArrayDeque<>(2);
  private ObjectNode lastChunk;

  public StopCuttingEventStream(EventStream delegate, Route route, List<String> stops) {
    super(delegate);
    this.stops = List.copyOf(stops);
    this.chat = route == Route.CHAT_COMPLETIONS;
  }

  @Override
  public SseEvent poll() {
    if (!ready.isEmpty()) {
      return ready.poll();
    }
    while (true) {
      SseEvent event = delegate.poll();
      if (event == SseEvent.PENDING) {
        return event;
      }
      if (event == null || event.isDone()) {
        SseEvent held = heldText();
        if (held != null && event != null) {
          ready.add(event);
        }
        return held != null ? held : event;
      }
      if (event.named()) {
        return event;
      }
      SseEvent out = cut(event);
      if (out != null) {
        return out;
      }
    }
  }

  /** Anything held back is at hand at once; otherwise the delegate says when there is more. */
  @Override
  public void onReady(Runnable action) {
    if (!ready.isEmpty()) {
      action.run();
    } else {
      delegate.onReady(action);
    }
  }

  /** The chunk with its text cut; the same event when nothing changed; null to drop it. */
  private SseEvent cut(SseEvent event) {
    ObjectNode chunk;
    try {
      if (!(Json.parse(event.data()) instanceof ObjectNode object)) {
        return event;
      }
      chunk = object;
    } catch (IOException e) {
      return event;
    }
    if (!(chunk.get("choices") instanceof ArrayNode array) || array.isEmpty()) {
      return event;
    }
    lastChunk = chunk;
    boolean changed = false;
    for (int i = array.size() - 1; i >= 0; i--) {
      if (!(array.get(i) instanceof ObjectNode choice)) {
        continue;
      }
      StopMatcher matcher = choices.computeIfAbsent(choice.path("index").asInt(0), k -> new StopMatcher(stops));
      if (matcher.done()) {
        array.remove(i);
        changed = true;
        continue;
      }
      String text = text(choice);
      String out = text != null ? matcher.feed(text) : null;
      if (matcher.stopped()) {
        choice.put("finish_reason", "stop");
        changed = true;
      } else if (choice.path("finish_reason").isTextual()) {
        String rest = matcher.flush();
        if (!rest.isEmpty()) {
          out = out != null ? out + rest : rest;
        }
      }
      if (out != null && !out.equals(text)) {
        setText(choice, out);
        changed = true;
      }
    }
    if (!changed) {
      return event;
    }
    if (array.isEmpty() && (!chunk.has("usage") || chunk.get("usage").isNull())) {
      return null;
    }
    return new SseEvent(null, Json.toString(chunk));
  }

  /** Text still held back when the stream ends without its finish chunk: one chunk to send it. */
  private SseEvent heldText() {
    if (lastChunk == null) {
      return null;
    }
    ArrayNode pending = Json.MAPPER.createArrayNode();
    for (Map.Entry<Integer, StopMatcher> entry : choices.entrySet()) {
      if (entry.getValue().done()) {
        continue;
      }
      String rest = entry.getValue().flush();
      if (!rest.isEmpty()) {
        ObjectNode choice = pending.addObject();
        choice.put("index", entry.getKey());
        setText(choice, rest);
        choice.putNull("finish_reason");
      }
    }
    if (pending.isEmpty()) {
      return null;
    }
    ObjectNode chunk = lastChunk.deepCopy();
    chunk.set("choices", pending);
    if (chunk.has("usage")) {
      chunk.putNull("usage");
    }
    return new SseEvent(null, Json.toString(chunk));
  }

  private String text(ObjectNode choice) {
    JsonNode node = chat ? choice.path("delta").get("content") : choice.get("text");
    return node != null && node.isTextual() ? node.textValue() : null;
  }

  private void setText(ObjectNode choice, String text) {
    if (chat) {
      ObjectNode delta = choice.get("delta") instanceof ObjectNode d ? d : choice.putObject("delta");
      delta.put("content", text);
    } else {
      choice.put("text", text);
    }
  }
}
