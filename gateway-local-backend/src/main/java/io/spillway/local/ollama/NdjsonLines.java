package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import java.io.IOException;
import okio.BufferedSource;

/**
 * Reads Ollama's {@code application/x-ndjson} body one JSON object per line, as the bytes arrive;
 * nothing beyond the current line is held. Not thread-safe.
 */
final class NdjsonLines {
  private final String backend;
  private final BufferedSource source;
  private final long maxLineBytes;

  NdjsonLines(String backend, BufferedSource source, long maxLineBytes) {
    this.backend = backend;
    this.source = source;
    this.maxLineBytes = maxLineBytes;
  }

  /** The next non-blank line as JSON, or null at the end of the body. */
  JsonNode next() throws IOException {
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
