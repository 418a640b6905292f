package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.local.UpstreamObjects;
import java.io.IOException;
import okhttp3.Call;
import okhttp3.Response;
import okio.BufferedSource;

/**
 * Reads Ollama's {@code application/x-ndjson} body one JSON object per line, as the bytes arrive;
 * nothing beyond the current line is held. The answer is finished with the line that says
 * {@code "done": true}. Not thread-safe, except {@link #close}.
 */
final class NdjsonLines implements UpstreamObjects {
  private final String backend;
  private final Call call;
  private final Response response;
  private final BufferedSource source;
  private final long maxLineBytes;
  private JsonNode peeked;
  private boolean finished;

  NdjsonLines(String backend, Call call, Response response, long maxLineBytes) {
    this.backend = backend;
    this.call = call;
    this.response = response;
    this.source = response.body().source();
    this.maxLineBytes = maxLineBytes;
  }

  /**
   * The first line, read ahead (an error that comes instead of it can still be answered with a
   * status) and given again by the first {@link #next}; null for an empty body.
   */
  JsonNode first() throws IOException {
    peeked = read();
    return peeked;
  }

  @Override
  public JsonNode next() throws IOException {
    if (finished) {
      return null;
    }
    JsonNode line = peeked != null ? peeked : read();
    peeked = null;
    if (line != null && line.path("done").asBoolean(false)) {
      finished = true;
    }
    return line;
  }

  @Override
  public boolean finished() {
    return finished;
  }

  /** Releases the connection; a stream left before its done line is cancelled. */
  @Override
  public void close() {
    if (!finished) {
      call.cancel();
    }
    response.close();
  }

  /** The next non-blank line as JSON, or null at the end of the body. */
  private JsonNode read() throws IOException {
    while (true) {
      if (source.exhausted()) {
        return null;
      }
      long newline = source.indexOf((byte) '\n', 0, maxLineBytes);
      String line;
      if (newline < 0) {
        if (source.getBuffer().size() >= maxLineBytes) {
          throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
              "The " + backend + " backend sent a line longer than " + maxLineBytes + " bytes", null);
        }
        line = source.readUtf8();
      } else {
        line = source.readUtf8(newline);
        source.skip(1);
      }
      if (line.isBlank()) {
        continue;
      }
      JsonNode node;
      try {
        node = Json.parse(line);
      } catch (IOException e) {
        node = null;
      }
      if (node == null || !node.isObject()) {
        throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
            "The " + backend + " backend sent a line that is not a JSON object", null);
      }
      return node;
    }
  }
}
