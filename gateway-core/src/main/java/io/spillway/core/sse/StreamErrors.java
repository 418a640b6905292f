package io.spillway.core.sse;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;

/**
 * The event that ends a stream which failed after its first byte: OpenAI's error object as a
 * {@code data:} line for chat/completions, and a typed {@code error} event for the Responses API.
 */
public final class StreamErrors {
  private StreamErrors() {}

  public static SseEvent errorEvent(GatewayException e, boolean responsesApi) {
    if (responsesApi) {
      ObjectNode event = Json.object();
      event.put("type", "error");
      event.put("code", e.code());
      event.put("message", e.getMessage());
      event.put("param", e.param());
      return new SseEvent("error", Json.toString(event));
    }
    return SseEvent.data(Json.toString(e.toError().toJson()));
  }
}
