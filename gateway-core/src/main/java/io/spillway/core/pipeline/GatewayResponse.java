package io.spillway.core.pipeline;

import io.spillway.core.error.GatewayException;
import io.spillway.core.error.OpenAiError;
import io.spillway.core.http.Headers;
import io.spillway.core.sse.EventStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A response: a status, headers, and either a buffered body or a stream of server-sent events. A
 * streamed response owns its {@link EventStream} and whoever takes it over must close it.
 */
public final class GatewayResponse {
  public static final String JSON = "application/json";
  public static final String EVENT_STREAM = "text/event-stream";

  private final int status;
  private final Headers headers;
  private final byte[] body;
  private final EventStream stream;

  private GatewayResponse(int status, Headers headers, byte[] body, EventStream stream) {
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.stream = stream;
  }

  public static GatewayResponse buffered(int status, Headers headers, byte[] body) {
    return new GatewayResponse(status, headers, body, null);
  }

  public static GatewayResponse json(int status, byte[] body) {
    return buffered(status, Headers.of("content-type", JSON), body);
  }

  public static GatewayResponse text(int status, String contentType, String body) {
    return buffered(status, Headers.of("content-type", contentType), body.getBytes(StandardCharsets.UTF_8));
  }

  public static GatewayResponse streamed(int status, Headers headers, EventStream stream) {
    return new GatewayResponse(status, headers.with("content-type", EVENT_STREAM), null, stream);
  }

  /** The error as the client sees it: OpenAI error body, matching status, Retry-After if known. */
  public static GatewayResponse error(GatewayException e) {
    Headers.Builder headers = Headers.builder().add("content-type", JSON);
    Duration retryAfter = e.retryAfter();
    if (retryAfter == null && (e.status() == 429 || e.status() == 503)) {
      retryAfter = Duration.ofSeconds(1);
    }
    if (retryAfter != null) {
      headers.add("retry-after", Long.toString(retryAfterSeconds(retryAfter)));
    }
    OpenAiError error = e.toError();
    return buffered(e.status(), headers.build(), error.toBytes());
  }

  /** Whole seconds, rounded up, at least 1: what {@code Retry-After} carries. */
  public static long retryAfterSeconds(Duration retryAfter) {
    long seconds = retryAfter.toSeconds() + (retryAfter.toNanosPart() > 0 ? 1 : 0);
    return Math.max(1, seconds);
  }

  public int status() {
    return status;
  }

  public Headers headers() {
    return headers;
  }

  public boolean isStream() {
    return stream != null;
  }

  /** The buffered body; null for a streamed response. */
  public byte[] body() {
    return body;
  }

  /** The event stream; null for a buffered response. */
  public EventStream stream() {
    return stream;
  }

  public boolean isSuccessful() {
    return status >= 200 && status < 300;
  }

  public GatewayResponse withHeader(String name, String value) {
    return new GatewayResponse(status, headers.with(name, value), body, stream);
  }

  public GatewayResponse withHeaders(Headers newHeaders) {
    return new GatewayResponse(status, newHeaders, body, stream);
  }

  public GatewayResponse withBody(byte[] newBody) {
    return new GatewayResponse(status, headers, newBody, null);
  }

  public GatewayResponse withStream(EventStream newStream) {
    return new GatewayResponse(status, headers, null, newStream);
  }

  @Override
  public String toString() {
    return "GatewayResponse{status=" + status + (stream != null ? ", streamed" : "") + "}";
  }
}
