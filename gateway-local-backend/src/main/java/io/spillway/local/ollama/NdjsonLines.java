package io.spillway.local.ollama;

import com.fasterxml.jackson.databind.JsonNode;
import io.spillway.core.error.UpstreamException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.ReadyWait;
import io.spillway.core.time.DurationText;
import io.spillway.core.upstream.BodySource;
import io.spillway.core.upstream.UpstreamExchange;
import io.spillway.core.upstream.WaitTimer;
import io.spillway.local.UpstreamObjects;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reads Ollama's {@code application/x-ndjson} body one JSON object per line from the exchange's
 * {@link BodySource}, splitting lines across the chunks as they arrive; nothing beyond the lines
 * of the chunks polled so far is held. The answer is finished with the line that says
 * {@code "done": true}.
 *
 * <p>{@link #poll} never blocks (the data path's client's body never does): it answers
 * {@link #PENDING} while no whole line is there. Each whole line must arrive within
 * {@code lineTimeout}, counted from the poll that found none (time spent waiting for a slow client
 * does not count); past it the exchange is cancelled and the stream fails with a
 * timeout. Not thread-safe, except {@link #close}.
 */
final class NdjsonLines implements UpstreamObjects {
  private final String backend;
  private final UpstreamExchange exchange;
  private final BodySource body;
  private final int maxLineBytes;
  private final Duration lineTimeout;
  private final ArrayDeque<JsonNode> lines = new ArrayDeque<>(2);
  /** The start of a line whose end has not arrived yet. */
  private byte[] partial = new byte[0];
  private int partialLength;
  private volatile boolean closed;
  private final WaitTimer wait;
  private final AtomicBoolean closeRan = new AtomicBoolean();
  private volatile Runnable drainLimit;
  private boolean bodyEnded;
  private volatile boolean finished;

  /**
   * @param lineTimeout the longest wait for each whole line; null: none
   */
  NdjsonLines(String backend, UpstreamExchange exchange, int maxLineBytes, Duration lineTimeout) {
    this.backend = backend;
    this.exchange = exchange;
    this.body = exchange.body();
    this.maxLineBytes = maxLineBytes;
    this.lineTimeout = lineTimeout;
    this.wait = new WaitTimer(exchange, lineTimeout);
  }

  /**
   * The first line, waited for on this (virtual) thread without a limit of its own (the caller
   * bounds the head and the first line together), and given again by the first {@link #poll}:
   * an error that comes instead of it can still be answered with a status. Null for an empty body.
   */
  JsonNode first() {
    while (true) {
      JsonNode line = take();
      if (line != PENDING) {
        if (line != null) {
          lines.addFirst(line);
        }
        return line;
      }
      ReadyWait.await(body::onReady);
    }
  }

  @Override
  public JsonNode poll() {
    if (finished) {
      return null;
    }
    JsonNode line;
    try {
      line = take();
    } catch (UpstreamException e) {
      wait.disarm();
      throw e;
    }
    if (line == PENDING) {
      armUnlessClosed();
      return PENDING;
    }
    wait.disarm();
    if (line != null && line.path("done").asBoolean(false)) {
      finished = true;
    }
    return line;
  }

  @Override
  public void onReady(Runnable action) {
    if (!lines.isEmpty() || bodyEnded || wait.expired()) {
      action.run();
      return;
    }
    body.onReady(action);
  }

  @Override
  public boolean nonBlocking() {
    return true;
  }

  @Override
  public boolean finished() {
    return finished;
  }

  /**
   * Releases the connection; a stream left before its end is cancelled. After the done line the
   * rest of the body (its end) is read first, from the body's thread, so that an HTTP/1.1
   * connection goes back to the pool instead of being closed; a server that does not end the body
   * within the line timeout has the exchange cancelled.
   */
  @Override
  public void close() {
    if (closeRan.getAndSet(true)) {
      return;
    }
    closed = true;
    wait.disarm();
    if (finished && !bodyEnded) {
      if (lineTimeout != null) {
        drainLimit = exchange.schedule(lineTimeout, body::close);
      }
      drainRest();
      return;
    }
    body.close();
  }

  private void drainRest() {
    while (true) {
      byte[] chunk;
      try {
        chunk = body.poll();
      } catch (UpstreamException e) {
        chunk = null;
      }
      if (chunk == BodySource.PENDING) {
        body.onReady(this::drainRest);
        return;
      }
      if (chunk == null) {
        Runnable limit = drainLimit;
        if (limit != null) {
          limit.run();
        }
        body.close();
        return;
      }
    }
  }

  /** The next whole line as JSON, null at the end of the body, or {@link #PENDING}. */
  private JsonNode take() {
    while (lines.isEmpty()) {
      if (bodyEnded) {
        return null;
      }
      byte[] chunk;
      try {
        chunk = body.poll();
      } catch (UpstreamException e) {
        if (wait.expired()) {
          throw timedOutFailure();
        }
        throw e;
      }
      if (chunk == BodySource.PENDING) {
        return PENDING;
      }
      if (chunk == null) {
        bodyEnded = true;
        if (partialLength > 0) {
          addLine(partial, 0, partialLength);
          partialLength = 0;
        }
      } else {
        split(chunk);
      }
    }
    return lines.poll();
  }

  private void split(byte[] chunk) {
    int start = 0;
    for (int i = 0; i < chunk.length; i++) {
      if (chunk[i] == '\n') {
        if (partialLength > 0) {
          append(chunk, start, i - start);
          addLine(partial, 0, partialLength);
          partialLength = 0;
        } else {
          addLine(chunk, start, i - start);
        }
        start = i + 1;
      }
    }
    if (start < chunk.length) {
      append(chunk, start, chunk.length - start);
    }
  }

  private void append(byte[] bytes, int from, int length) {
    if (partialLength + length > maxLineBytes) {
      close();
      throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
          "The " + backend + " backend sent a line longer than " + maxLineBytes + " bytes", null);
    }
    if (partialLength + length > partial.length) {
      partial = Arrays.copyOf(partial, Math.min(maxLineBytes, Math.max(partialLength + length, 2 * partial.length)));
    }
    System.arraycopy(bytes, from, partial, partialLength, length);
    partialLength += length;
  }

  private void addLine(byte[] bytes, int from, int length) {
    if (length > maxLineBytes) {
      close();
      throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
          "The " + backend + " backend sent a line longer than " + maxLineBytes + " bytes", null);
    }
    if (blank(bytes, from, length)) {
      return;
    }
    JsonNode node;
    try {
      node = Json.parse(new String(bytes, from, length, java.nio.charset.StandardCharsets.UTF_8));
    } catch (IOException e) {
      node = null;
    }
    if (node == null || !node.isObject()) {
      close();
      throw new UpstreamException(backend, UpstreamException.Failure.INVALID_RESPONSE,
          "The " + backend + " backend sent a line that is not a JSON object", null);
    }
    lines.add(node);
  }

  private static boolean blank(byte[] bytes, int from, int length) {
    for (int i = from; i < from + length; i++) {
      byte b = bytes[i];
      if (b != ' ' && b != '\t' && b != '\r') {
        return false;
      }
    }
    return true;
  }

  private void armUnlessClosed() {
    if (!closed) {
      wait.arm();
    }
  }

  private UpstreamException timedOutFailure() {
    return new UpstreamException(backend, UpstreamException.Failure.TIMEOUT,
        "The " + backend + " backend (Ollama) sent no whole line within " + DurationText.format(lineTimeout), null);
  }
}
