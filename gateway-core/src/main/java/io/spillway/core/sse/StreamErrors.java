package io.spillway.core.sse;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.pipeline.ErrorMapper;
import java.util.List;

/**
 * The events that end a stream which failed after its first byte, in the shape of each OpenAI API:
 * what {@link EventStream#errorEvents} returns. The status line has gone out by then, so these
 * events are the only place the client can read the failure.
 */
public final class StreamErrors {
  private StreamErrors() {}

  /** Chat completions and completions: OpenAI's error object as a {@code data:} line, then {@code [DONE]}. */
  public static List<SseEvent> chat(GatewayException e) {
    return List.of(SseEvent.data(Json.toString(ErrorMapper.json(e))), SseEvent.DONE);
  }

  /** The Responses API: one typed {@code error} event (the API has no {@code [DONE]}). */
  public static List<SseEvent> responses(GatewayException e) {
    ObjectNode event = Json.object();
    event.put("type", "error");
    event.put("code", e.code());
    event.put("message", e.getMessage());
    event.put("param", e.param());
    return List.of(new SseEvent("error", Json.toString(event)));
  }
}
