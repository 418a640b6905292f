package io.spillway.core.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import io.spillway.core.http.Headers;
import io.spillway.core.json.AnswerSummary;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

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
  /** The body read as JSON, shared by the copies that keep the body (see {@link #json()}). */
  private final ParsedBody parsed;

  private GatewayResponse(int status, Headers headers, byte[] body, EventStream stream, ParsedBody parsed) {
    this.status = status;
    this.headers = headers;
    this.body = body;
    this.stream = stream;
    this.parsed = parsed;
  }

  private GatewayResponse(int status, Headers headers, byte[] body, EventStream stream) {
    this(status, headers, body, stream, body == null ? null : new ParsedBody());
  }

  public static GatewayResponse buffered(int status, Headers headers, byte[] body) {
    return new GatewayResponse(status, headers, body, null);
  }

  /** A buffered JSON answer already read as {@code tree}, which {@link #json()} then returns. */
  public static GatewayResponse buffered(int status, Headers headers, byte[] body, JsonNode tree) {
    ParsedBody parsed = new ParsedBody();
    parsed.tree = tree;
    return new GatewayResponse(status, headers, body, null, parsed);
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

  /**
   * The buffered body read as JSON, or null when it is empty, not JSON, or the response is
   * streamed. Read once: every stage that looks into the answer (quota settlement, the access log)
   * shares the one tree, including through {@link #withHeader} and {@link #withHeaders} copies.
   * Treat it as read-only.
   */
  public JsonNode json() {
    return parsed == null ? null : parsed.of(body);
  }

  /**
   * What accounting reads from the buffered body (usage, error, model), read without a tree of the
   * whole answer ({@link AnswerSummary}), or from the tree when {@link #json()} already made one.
   * Read once and shared like {@link #json()}; {@link AnswerSummary#NOT_JSON} for a streamed or
   * non-JSON response.
   */
  public AnswerSummary summary() {
    return parsed == null ? AnswerSummary.NOT_JSON : parsed.summary(body);
  }

  /** The event stream; null for a buffered response. */
  public EventStream stream() {
    return stream;
  }

  public boolean isSuccessful() {
    return status >= 200 && status < 300;
  }

  public GatewayResponse withHeader(String name, String value) {
    return new GatewayResponse(status, headers.with(name, value), body, stream, parsed);
  }

  public GatewayResponse withHeaders(Headers newHeaders) {
    return new GatewayResponse(status, newHeaders, body, stream, parsed);
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

  /** Parses a body on first use; a response is handled by one request thread at a time. */
  private static final class ParsedBody {
    private static final JsonNode NOT_JSON = MissingNode.getInstance();
    private JsonNode tree;
    private AnswerSummary summary;

    AnswerSummary summary(byte[] body) {
      if (summary == null) {
        summary = tree != null ? AnswerSummary.of(tree == NOT_JSON ? null : tree) : AnswerSummary.read(body);
      }
      return summary;
    }

    JsonNode of(byte[] body) {
      if (tree == null) {
        tree = read(body);
      }
      return tree == NOT_JSON ? null : tree;
    }

    private static JsonNode read(byte[] body) {
      if (body.length == 0) {
        return NOT_JSON;
      }
      try {
        return Json.parse(body);
      } catch (IOException | RuntimeException e) {
        return NOT_JSON;
      }
    }
  }
}
