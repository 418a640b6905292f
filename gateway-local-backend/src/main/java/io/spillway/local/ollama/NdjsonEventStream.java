package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.error.UpstreamFailures;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.SseEvent;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.Call;
import okhttp3.Response;

/**
 * An Ollama NDJSON stream read as OpenAI server-sent events: each {@link #next} reads at most the
 * lines it needs to produce one event, so the client's pace sets the upstream's. The stream must
 * end with Ollama's {@code "done": true} line; an {@code {"error": …}} line, a broken connection
 * or an end without it fails the stream with an {@link UpstreamException}, which the front end turns
 * into an OpenAI error event.
 */
final class NdjsonEventStream implements EventStream {
  private final String backend;
  private final Call call;
  private final Response response;
  private final NdjsonLines lines;
  private final StreamTranslator translator;
  private final ArrayDeque<SseEvent> pending = new ArrayDeque<>();
  private final AtomicBoolean closed = new AtomicBoolean();
  private JsonNode firstLine;
  private boolean done;
  private boolean started;

  /** {@code firstLine} was already read (to catch an error before the response started). */
  NdjsonEventStream(
      String backend, Call call, Response response, NdjsonLines lines, JsonNode firstLine, StreamTranslator translator) {
    this.backend = backend;
    this.call = call;
    this.response = response;
    this.lines = lines;
    this.firstLine = firstLine;
    this.translator = translator;
  }

  @Override
  public SseEvent next() {
    if (closed.get()) {
      return null;
    }
    while (pending.isEmpty()) {
      if (done || closed.get()) {
        return null;
      }
      JsonNode line = readLine();
      if (line == null) {
        return null;
      }
      pending.addAll(translator.line(line));
      if (line.path("done").asBoolean(false)) {
        done = true;
        pending.addAll(translator.done(line));
        response.close();
      }
    }
    started = true;
    return pending.poll();
  }

  private JsonNode readLine() {
    JsonNode line = firstLine;
    if (line != null) {
      firstLine = null;
    } else {
      try {
        line = lines.next();
      } catch (IOException e) {
        if (closed.get()) {
          return null;
        }
        close();
        throw UpstreamFailures.midStream(backend, e);
      } catch (UpstreamException e) {
        close();
        throw e;
      }
      if (line == null) {
        if (closed.get()) {
          return null;
        }
        close();
        throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
            "The " + backend + " backend (Ollama) ended the stream before it was complete", null);
      }
    }
    String error = Json.text(line, "error");
    if (error != null) {
      close();
      throw new UpstreamException(backend, UpstreamException.Failure.RESET_MID_STREAM,
          "The " + backend + " backend (Ollama) failed in the middle of the answer: " + error, null);
    }
    return line;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      call.cancel();
      response.close();
    }
  }

  @Override
  public boolean started() {
    return started;
  }
}
