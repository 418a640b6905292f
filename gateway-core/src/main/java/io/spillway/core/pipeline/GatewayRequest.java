package io.spillway.core.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.http.Headers;
import io.spillway.core.json.Json;
import java.time.Instant;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * One client request as the pipeline sees it: the route, the client's headers, and the JSON body
 * parsed once.
 *
 * <p>Treat the body as read-only. A stage that changes it builds a modified copy and passes
 * {@link #withBody} on; the serialized form is then computed once, lazily, by whichever backend
 * needs bytes. An unmodified request is forwarded as the exact bytes the client sent.
 *
 * <p>Attributes are shared by all copies of one request. They are not thread-safe: one thread at a
 * time works on a request (its event loop, or the virtual thread it moved to), each hand-over
 * ordered by the completion of the stage that crossed threads.
 */
public final class GatewayRequest {
  private final String id;
  private final Route route;
  private final Headers headers;
  private final ObjectNode body;
  private final Instant receivedAt;
  private final Map<Attribute<?>, Object> attributes;
  private byte[] bodyBytes;

  private GatewayRequest(
      String id,
      Route route,
      Headers headers,
      ObjectNode body,
      byte[] bodyBytes,
      Instant receivedAt,
      Map<Attribute<?>, Object> attributes) {
    this.id = id;
    this.route = route;
    this.headers = headers;
    this.body = body;
    this.bodyBytes = bodyBytes;
    this.receivedAt = receivedAt;
    this.attributes = attributes;
  }

  /**
   * A request as received. {@code rawBody} must be the bytes {@code body} was parsed from (or null
   * for a request without a body).
   */
  public static GatewayRequest create(
      String id, Route route, Headers headers, ObjectNode body, byte[] rawBody, Instant receivedAt) {
    return new GatewayRequest(id, route, headers, body, rawBody, receivedAt, new IdentityHashMap<>());
  }

  /**
   * A request as the front end received it, before the parse stage: {@code rawBody} (null for a
   * request without a body) is not read yet and {@link #body()} is an empty object. The parse stage
   * passes on {@link #withParsedBody}.
   */
  public static GatewayRequest received(String id, Route route, Headers headers, byte[] rawBody, Instant receivedAt) {
    return new GatewayRequest(id, route, headers, Json.object(), rawBody, receivedAt, new IdentityHashMap<>());
  }

  /**
   * This request with the body the parse stage read from its bytes; unlike {@link #withBody}, the
   * exact bytes the client sent stay what is forwarded.
   */
  public GatewayRequest withParsedBody(ObjectNode parsed) {
    return new GatewayRequest(id, route, headers, parsed, bodyBytes, receivedAt, attributes);
  }

  /** The request id the client sees in {@code x-request-id}: its own, or one Spillway made. */
  public String id() {
    return id;
  }

  public Route route() {
    return route;
  }

  public Headers headers() {
    return headers;
  }

  /** The JSON body; an empty object for requests without one. Do not modify: see the class doc. */
  public ObjectNode body() {
    return body;
  }

  public Instant receivedAt() {
    return receivedAt;
  }

  /** The body as bytes to send upstream, serialized at most once per copy. */
  public byte[] bodyBytes() {
    byte[] bytes = bodyBytes;
    if (bytes == null) {
      bytes = Json.toBytes(body);
      bodyBytes = bytes;
    }
    return bytes;
  }

  /** The requested model, or null. */
  public String model() {
    return Json.text(body, "model");
  }

  public boolean stream() {
    JsonNode stream = body.get("stream");
    return stream != null && stream.asBoolean(false);
  }

  public GatewayRequest withBody(ObjectNode newBody) {
    return new GatewayRequest(id, route, headers, newBody, null, receivedAt, attributes);
  }

  /**
   * This request as a call of another route with {@code newBody}, sharing its attributes (its
   * outcome, disconnect, event loop, trace context): what a backend that serves one API over
   * another (Anthropic's Messages over chat completions) hands its server.
   */
  public GatewayRequest asRoute(Route newRoute, ObjectNode newBody) {
    return new GatewayRequest(id, newRoute, headers, newBody, null, receivedAt, attributes);
  }

  public GatewayRequest withHeaders(Headers newHeaders) {
    return new GatewayRequest(id, route, newHeaders, body, bodyBytes, receivedAt, attributes);
  }

  @SuppressWarnings("unchecked")
  public <T> T attribute(Attribute<T> key) {
    return (T) attributes.get(key);
  }

  public <T> T attribute(Attribute<T> key, T defaultValue) {
    T value = attribute(key);
    return value != null ? value : defaultValue;
  }

  public <T> void setAttribute(Attribute<T> key, T value) {
    if (value == null) {
      attributes.remove(key);
    } else {
      attributes.put(key, value);
    }
  }

  @Override
  public String toString() {
    return "GatewayRequest{id=" + id + ", route=" + route + ", model=" + model() + "}";
  }
}
