package io.spillway.core.api.anthropic;

import io.spillway.core.error.ErrorDialect;
import io.spillway.core.error.GatewayException;
import io.spillway.core.json.Json;
import io.spillway.core.sse.EventStream;
import io.spillway.core.sse.ForwardingEventStream;
import io.spillway.core.sse.SseEvent;
import java.util.List;

/**
 * A Messages API stream: its events pass as they are, and a failure after the first byte ends it
 * with Anthropic's {@code error} event ({@code event: error}, data
 * {@code {"type":"error","error":{"type":…,"message":…}}}), which Anthropic's SDKs raise as the
 * API error it names. {@link MessagesEndpoint} puts every {@code /v1/messages} stream in one.
 */
public final class MessagesEventStream extends ForwardingEventStream {
  public MessagesEventStream(EventStream delegate) {
    super(delegate);
  }

  @Override
  public List<SseEvent> errorEvents(GatewayException e) {
    return List.of(new SseEvent("error", Json.toString(ErrorDialect.ANTHROPIC.body(e))));
  }

  @Override
  public String toString() {
    return "Messages(" + delegate + ")";
  }
}
