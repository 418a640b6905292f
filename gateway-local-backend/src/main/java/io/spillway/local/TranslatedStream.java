package io.spillway.local;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A local server's streamed answer as the client's events, the one way every local route ends a
 * stream: each object goes to the {@link StreamTranslator}; the answer ends when the server marks
 * its end, or stops sending after a {@linkplain StreamTranslator#whole() whole} answer, and then the
 * translator's closing events follow. An {@code error} object, a broken connection or an end
 * before the answer is whole fails the stream with an {@link UpstreamException}, which the front
 * end turns into the API's error event. Each {@link #poll} reads at most the objects it needs for
 * one event, so the client's pace sets the server's.
 *
 * <p>Blocks only where its source does: over a {@linkplain UpstreamObjects#nonBlocking non-blocking}
 * source a poll that finds no whole object answers {@link SseEvent#PENDING}, and the front end
 * relays the stream from its event loop. Not thread-safe, except {@link #close}.
 */
public final class TranslatedStream implements EventStream {
  private final String backend;
  private final String server;
  private final UpstreamObjects upstream;
  private final StreamTranslator translator;
  private final ArrayDeque<SseEvent> pending = new ArrayDeque<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private JsonNode last;
  private boolean ended;
  private boolean started;

  /**
   * @param backend the backend's name, for the {@link UpstreamException}s
   * @param server the server as failures name it ({@code "local backend (Ollama)"})
   */
  public TranslatedStream(String backend, String server, UpstreamObjects upstream, StreamTranslator translator) {
    this.backend = backend;
    this.server = server;
    this.upstream = upstream;
    this.translator = translator;
  }

  /** Blocks only when its source blocks (a source that is not {@link UpstreamObjects#nonBlocking}). */
  @Override
  public SseEvent poll() {
    if (closed.get()) {
      return null;
    }
    while (pending.isEmpty()) {
      if (ended || closed.get()) {
        return null;
      }
      JsonNode object = read();
      if (object == UpstreamObjects.PENDING) {
        return SseEvent.PENDING;
      }
      if (object == null) {
        if (closed.get()) {
          return null;
        }
        if (!upstream.finished() && !translator.whole()) {
          close();
          throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
              "The " + server + " ended the stream before it was complete", null);
        }
        end();
      } else {
        failOnError(object);
        last = object;
        pending.addAll(translator.line(object));
        if (upstream.finished()) {
          end();
        }
      }
    }
    started = true;
    return pending.poll();
  }

  @Override
  public void onReady(Runnable action) {
    if (!pending.isEmpty() || ended || closed.get()) {
      action.run();
      return;
    }
    upstream.onReady(action);
  }

  @Override
  public boolean nonBlocking() {
    return upstream.nonBlocking();
  }

  private JsonNode read() {
    try {
      return upstream.poll();
    } catch (UpstreamException e) {
      if (closed.get()) {
        return null;
      }
      close();
      throw e;
    }
  }

  private void failOnError(JsonNode object) {
    JsonNode error = object.get("error");
    if (error == null || error.isNull()) {
      return;
    }
    close();
    String message = error.isObject() ? Json.text(error, "message") : error.asText();
    throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
        "The " + server + " failed in the middle of the answer: " + message, null);
  }

  private void end() {
    ended = true;
    pending.addAll(translator.end(last));
    upstream.close();
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      upstream.close();
    }
  }

  @Override
  public boolean started() {
    return started;
  }
}
